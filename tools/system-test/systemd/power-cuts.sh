# shellcheck shell=bash disable=SC2154  # sourced: the variables it reads are set by the script that sources it
# The power cuts (issue 28; docs/reliability.md, "Power cuts"), sourced by scripts/systemd-test: the
# cut itself (cut_boot), used by the six steps (two cuts) and by the campaign (power_cut_campaign,
# $cuts = "F T U [P]").
#
# One qemu run per cut. The host boots the guest, waits for its `CUT-WINDOW <phase>` line on the
# record port (ttyS1, a file here), waits a random time within the phase's window and kills qemu with
# SIGKILL: no shutdown, no sync, the guest's page cache lost. The next boot checks what the cut left
# (after-cut.sh) and the host judges every boot's record at the end (power-cut-check).

# Seconds after CUT-WINDOW within which the power goes: the first start takes 3-10 s under TCG, an
# upgrade through apt 20-60 s; the client makes a few requests a second. An `unpack` window is opened by
# the upgrade's preinst, which holds dpkg there (unpack-hold.sh): any moment in it is inside the unpack.
declare -A window=([first-start]=${NEARBY_CUT_WINDOW_FIRST:-10} [toggle]=${NEARBY_CUT_WINDOW_TOGGLE:-20} [upgrade]=${NEARBY_CUT_WINDOW_UPGRADE:-45} [unpack]=${NEARBY_CUT_WINDOW_UNPACK:-3})

# cut_boot N CONSOLE RECORD DEADLINE: boot N; if the guest opens a cut window, cut its power at a
# random moment within it; else wait (DEADLINE seconds at most) for the guest to power itself off.
# Sets $cut_phase to the window's phase, or "" for a boot that was not cut.
cut_boot() {
    local n=$1 record=$3 began=$SECONDS deadline=$((SECONDS + $4)) opened delay at
    : > "$record"
    boot "$2" "$record"
    cut_phase=
    until grep -q '^CUT-WINDOW' "$record"; do
        if ! kill -0 "$qemu" 2>/dev/null; then
            wait "$qemu" 2>/dev/null || true
            log "boot $n: powered off by the guest after $((SECONDS - began))s"
            return
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "boot $n: neither a cut window nor a power-off within $4s: killing qemu"
            kill -KILL "$qemu" 2>/dev/null || true
            wait "$qemu" 2>/dev/null || true
            return
        fi
        sleep 0.5
    done
    opened=$SECONDS
    cut_phase=$(sed -n 's/^CUT-WINDOW \([a-z-]*\).*/\1/p' "$record" | head -n1)
    # The moment of the cut: uniform in the window, in milliseconds (the fault injected, not a wait
    # for anything).
    delay=$(( (RANDOM * 32768 + RANDOM) % (${window[$cut_phase]:-10} * 1000) ))
    at="$((delay / 1000)).$(printf %03d $((delay % 1000)))"
    sleep "$at"
    kill -KILL "$qemu" 2>/dev/null || true
    wait "$qemu" 2>/dev/null || true
    log "boot $n ($cut_phase): power cut ${at}s into the window ($((opened - began))s to the window, $((SECONDS - began))s in all; $(grep -c '^ACK' "$record") acknowledged)"
}

# judge_cuts RECORDS: power-cut-check over the folder's records, its verdict in RECORDS/verdict.
judge_cuts() {
    local verdict
    set +e
    "$here/power-cut-check" "$1"/boot-*.rec | tee "$1/verdict" >&2
    verdict=${PIPESTATUS[0]}
    set -e
    return "$verdict"
}

power_cut_campaign() {
    local n_first n_toggle n_upgrade n_unpack n_dpkg plan total i campaign records
    read -r n_first n_toggle n_upgrade n_unpack <<<"$cuts"
    n_unpack=${n_unpack:-1}
    n_dpkg=$((n_upgrade + n_unpack))
    # Each phase spread evenly over the campaign (a campaign stopped early has cut in every phase): the
    # first-start cuts among all, the upgrades (random moment or inside the unpack) among the rest, the
    # unpack cuts among the upgrades, the first upgrade an unpack cut.
    local dpkg_kind=() others=() j=0 k=0
    for ((i = 0; i < n_dpkg; i++)); do
        if ((i * n_unpack % n_dpkg < n_unpack)); then dpkg_kind+=(unpack); else dpkg_kind+=(upgrade); fi
    done
    total=$((n_toggle + n_dpkg))
    for ((i = 0; i < total; i++)); do
        if (((i + 1) * n_dpkg % total < n_dpkg)); then others+=(dpkg); else others+=(toggle); fi
    done
    # The first upgrade cut second among them (a campaign stopped early has cut during an upgrade).
    for ((i = 1; i < ${#others[@]}; i++)); do
        [ "${others[i]}" != dpkg ] || { others=("${others[@]:i-1}" "${others[@]:0:i-1}"); break; }
    done
    for i in "${!others[@]}"; do
        [ "${others[i]}" != dpkg ] || others[i]=${dpkg_kind[k++]}
    done
    plan=()
    total=$((n_first + n_toggle + n_dpkg))
    for ((i = 0; i < total; i++)); do
        if ((i * n_first % total < n_first)); then plan+=(first-start); else plan+=("${others[j++]}"); fi
    done
    plan+=(final)
    log "power cuts: ${#plan[@]} boots, $((${#plan[@]} - 1)) cuts: $n_first during the first start, $n_toggle while toggling, $n_upgrade during apt-get upgrade, $n_unpack inside its unpack (${plan[*]})"
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
        echo "$i" > "$systest/cut-boot"
        echo "${plan[$i]}" > "$systest/cut-phase"
        # The deadline is for a guest that hangs: a first-start boot (boot, purge, apt-get install)
        # took over 900 s at load 20.
        cut_boot "$i" "$records/boot-$(printf %02d "$i").console" "$records/boot-$(printf %02d "$i").rec" 2400
    done
    took "power cuts: $((${#plan[@]} - 1)) cuts"
    local verdict=0
    judge_cuts "$records" || verdict=1
    log "power cuts: $([ "$verdict" = 0 ] && echo PASS || echo FAIL) in $((SECONDS - campaign))s (records: $records)"
    [ "$verdict" = 0 ]
}
