# shellcheck shell=bash disable=SC2154  # sourced: the variables it reads are set by the script that sources it
# What a power cut left, checked in the guest and written to the record port (sourced by
# guest-power-cuts and guest-test; judged on the host by power-cut-check, docs/reliability.md).
# Needs: $dir, $unit, $sock, the guest's `note` and `ask` (a socket request as someone in the socket's group).
#
#   record_open        the record port: /dev/ttyS1, whose other end is a file on the host
#   say LINE...        one record line, also noted on the console
#   after_cut          dpkg's status of the package, the unit active, the three values, the state file;
#                      a cut inside dpkg is finished with `dpkg --configure -a` and checked again
#   upgrade_in_window  `apt-get upgrade` while power-cut-client toggles (both cut by the host at some
#                      moment); UPGRADED says whether the maintainer scripts restarted the gateway
statefile=/var/lib/nearby-gateway/state.json
record_open() {
    stty -F /dev/ttyS1 raw -echo
    exec 3>/dev/ttyS1
}
say() { echo "$*" >&3; note "$*"; }
# cut_wait SECONDS COMMAND...: poll with a deadline; its status is the command's last.
cut_wait() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}
cut_active() { [ "$(systemctl is-active "$unit")" = active ]; }
cut_check() {
    local started=$SECONDS state key
    # Cut inside `apt-get install`, before the owner configured and enabled it: nothing to start.
    if [ "$(systemctl is-enabled "$unit" 2>/dev/null)" != enabled ]; then
        say "ACTIVE not-enabled"
        return
    fi
    # The deadline is for a unit that never starts: a start under TCG at load 20 takes minutes.
    if cut_wait 600 cut_active; then say "ACTIVE yes $((SECONDS - started))s, $(systemctl show -p NRestarts --value "$unit") restarts"
    else
        say "ACTIVE no $(systemctl show -p ActiveState,SubState,Result --value "$unit" | tr '\n' ' ')"
        systemctl status --no-pager -n 20 "$unit" || true
        return
    fi
    cut_wait 60 ask PING || say "SOCKET no answer"
    # One client for the three (each python3 start costs a second under TCG).
    local values=()
    mapfile -t values < <(ask "GET background" "GET permission" "GET power" | sed 's/^OK //')
    for key in background permission power; do
        say "GOT $key ${values[0]:-}"
        values=("${values[@]:1}")
    done
    if [ -e "$statefile" ]; then
        if state=$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$statefile" 2>&1); then
            say "FILE ok $state"
        else
            say "FILE bad $(echo "$state" | tail -n1)"
        fi
    else
        say "FILE missing"
    fi
    say "CORRUPT $(find /var/lib/nearby-gateway -name 'state.json.corrupt-*' | wc -l)"
}
after_cut() {
    local installed audit
    installed=$(dpkg-query -W -f='${Status}|${Version}' nearby-gateway 2>/dev/null || true)
    case "${installed%%|*}" in ''|unknown*|*config-files|*not-installed) installed= ;; esac
    if [ -n "$installed" ]; then
        say "DPKG ${installed// /-}"
        cut_check
        # A cut inside dpkg leaves the package half-configured or unpacked: what the owner's next apt
        # run (or `dpkg --configure -a`) finishes. It must finish, and the gateway must run after it.
        audit=$(dpkg --audit 2>&1 || true)
        [ -z "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ] || audit="updates pending $audit"
        if [ -n "$audit" ]; then
            say "AUDIT $(echo "$audit" | grep -m1 -o 'nearby-gateway\|[a-z-]*configured[a-z ]*' | head -n1)"
            if dpkg --configure -a >/dev/null 2>&1; then say "CONFIGURED $(dpkg-query -W -f='${Status}|${Version}' nearby-gateway | tr ' ' -)"
            else say "ERROR dpkg --configure -a failed"; fi
            # A cut while dpkg unpacked leaves the package half-installed, which --configure cannot
            # finish: apt tells the owner to reinstall it (the old binary runs meanwhile).
            if dpkg-query -W -f='${Status}' nearby-gateway | grep -q 'reinstreq\|half-installed'; then
                if apt-get install -y -q --reinstall "nearby-gateway=$(dpkg-query -W -f='${Version}' nearby-gateway)" >/dev/null 2>&1
                then say "REINSTALLED $(dpkg-query -W -f='${Status}|${Version}' nearby-gateway | tr ' ' -)"
                else say "ERROR apt-get install --reinstall failed"; fi
            fi
            cut_check
        fi
    fi
    say "CHECKED"
}
upgrade_in_window() {
    local pid
    pid=$(systemctl show -p MainPID --value "$unit")
    python3 "$dir/power-cut-client" "$sock" /dev/ttyS1 &
    apt-get upgrade -y -q >/dev/null 2>&1 || say "ERROR apt-get upgrade failed"
    cut_wait 60 cut_active || true
    if [ "$(systemctl show -p MainPID --value "$unit")" != "$pid" ]; then pid=restarted; else pid=not-restarted; fi
    say "UPGRADED $(dpkg-query -W -f='${Version}' nearby-gateway) $pid"
}
