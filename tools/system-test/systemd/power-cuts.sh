# The power-cut campaign (issue 28; docs/reliability.md, "Power cuts"), sourced by scripts/systemd-test
# once the packages, the signed repositories and the kernel are ready ($cuts = "F T U").
#
# One qemu run per cut. The host writes the boot's number and phase into the guest's root, boots it,
# waits for the guest's `CUT-WINDOW` line on its record port (ttyS1, a file here), waits a random time
# within the phase's window and kills qemu with SIGKILL: no shutdown, no sync, the guest's page cache
# lost. The next boot checks what the cut left (guest-power-cuts) and the host judges every boot's
# record at the end (power-cut-check). A last boot only checks.
read -r n_first n_toggle n_upgrade <<<"$cuts"
# Seconds after CUT-WINDOW within which the power goes: the first start takes 3-10 s under TCG, an
# upgrade through apt 20-60 s; the client makes a few requests a second.
declare -A window=([first-start]=${NEARBY_CUT_WINDOW_FIRST:-10} [toggle]=${NEARBY_CUT_WINDOW_TOGGLE:-20} [upgrade]=${NEARBY_CUT_WINDOW_UPGRADE:-45})
plan=()
for ((i = 0; i < n_first; i++)); do plan+=(first-start); done
total=$((n_toggle + n_upgrade))
for ((i = 0; i < total; i++)); do
    # The upgrade cuts spread evenly among the toggling ones.
    if ((n_upgrade > 0 && (i * n_upgrade) / total != ((i + 1) * n_upgrade) / total)); then plan+=(upgrade); else plan+=(toggle); fi
done
plan+=(final)
log "power cuts: ${#plan[@]} boots, $((${#plan[@]} - 1)) cuts: $n_first during the first start, $n_toggle while toggling, $n_upgrade during apt-get upgrade"
campaign=$SECONDS
# The six steps' driver log, before their root goes.
[ ! -f "$root.upper/root/systest/log" ] || cp "$root.upper/root/systest/log" "$cache/steps-driver.log"
prepare_root
# The repository as the owner has it once the newer build is published: both versions, so each upgrade
# cut can start from the older one.
ln -sfn v2 "$root/srv/nearby-repo/current"
echo power-cuts > "$systest/mode"
records=$cache/power-cuts
rm -rf "$records"
mkdir -p "$records"
took "power cuts: root ready"
for i in "${!plan[@]}"; do
    phase=${plan[$i]}
    echo "$i" > "$systest/cut-boot"
    echo "$phase" > "$systest/cut-phase"
    record=$records/boot-$(printf %02d "$i").rec
    : > "$record"
    began=$SECONDS
    boot "$records/boot-$(printf %02d "$i").console" "$record"
    if [ "$phase" = final ]; then
        until_gone "$qemu" 900
        log "boot $i (final checks): $((SECONDS - began))s"
        continue
    fi
    deadline=$((SECONDS + 900))
    until grep -q '^CUT-WINDOW' "$record"; do
        kill -0 "$qemu" 2>/dev/null || { log "boot $i: the guest stopped before its cut window"; break; }
        [ "$SECONDS" -lt "$deadline" ] || { log "boot $i: no cut window within 900s"; break; }
        sleep 0.5
    done
    opened=$SECONDS
    # The moment of the cut: uniform in the window, in milliseconds (the fault injected, not a wait
    # for anything).
    delay=$(( (RANDOM * 32768 + RANDOM) % (window[$phase] * 1000) ))
    sleep "$((delay / 1000)).$(printf %03d $((delay % 1000)))"
    kill -KILL "$qemu" 2>/dev/null || true
    wait "$qemu" 2>/dev/null || true
    log "boot $i ($phase): power cut $((delay / 1000)).$(printf %03d $((delay % 1000)))s into the window ($((opened - began))s to the window, $((SECONDS - began))s in all; $(grep -c '^ACK' "$record") acknowledged)"
done
took "power cuts: $((${#plan[@]} - 1)) cuts"
set +e
"$here/power-cut-check" "$records"/boot-*.rec | tee "$records/verdict" >&2
verdict=${PIPESTATUS[0]}
set -e
log "power cuts: $([ "$verdict" = 0 ] && echo PASS || echo FAIL) in $((SECONDS - campaign))s (records: $records)"
[ "$verdict" = 0 ]
