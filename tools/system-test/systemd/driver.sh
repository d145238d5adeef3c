# shellcheck shell=bash disable=SC2154  # sourced: the variables it reads are set by the script that sources it
# The helpers of the guest drivers under systemd (guest-test for amd64, arm64-guest-test), sourced
# once $dir (the test's folder), $unit and $sock are set. Every line goes to the console and $dir/log;
# the verdict is SYSTEST-RESULT=PASS|FAIL on the console, then the guest powers off.
exec > >(tee -a "$dir/log" > /dev/console) 2>&1

# Each line with the guest's uptime: where a run spends its time.
note() { echo "systest: [$(cut -d' ' -f1 /proc/uptime | cut -d. -f1)s] $*"; }
finish() {
    local result=$1
    echo "SYSTEST-RESULT=$result"
    sync
    systemctl --no-block poweroff
    exit 0
}
# A driver may set on_fail to a function that prints what explains a failure of its current step.
on_fail=
fail() {
    echo "FAILED: $*"
    if [ -n "$on_fail" ]; then
        local hook=$on_fail
        on_fail=
        "$hook" 2>&1 | sed 's/^/    /' || true
    fi
    systemctl status --no-pager -n 30 "$unit" 2>&1 || true
    finish FAIL
}
trap 'fail "the driver stopped at line $LINENO ($BASH_COMMAND)"' ERR

# wait_until SECONDS WHAT COMMAND...: poll with a deadline (the guest runs 5-20x slower than a host).
wait_until() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within ${seconds}s"
        sleep 0.2
    done
}
# What both radios did, when the packaged gateway did not find the peer's message: each side's counters,
# the controllers, the peer's log and the unit's journal.
radio_diagnosis() {
    echo "gateway: $(ask 'GET power' 'GET permission' 'GET background' 'GET stats' 2>&1 | tr '\n' ' ' | cut -c1-700)"
    echo "peer:    $(printf 'GET stats\n' | timeout 20 socat -t 10 - UNIX-CONNECT:/run/systest-peer.sock 2>&1 | cut -c1-600)"
    hciconfig -a 2>&1 | grep -E '^hci|UP|RX bytes|TX bytes'
    systemctl status --no-pager -n 0 systest-btvirt.service 2>&1 | head -n 5
    echo "--- the peer's log"
    tail -n 25 "$dir/peer.log"
    echo "--- the unit's journal"
    journalctl -u "$unit" --no-pager -n 25 -o short-monotonic
}
prop() { systemctl show -p "$1" --value "$unit"; }
is_active() { [ "$(systemctl is-active "$unit")" = active ]; }
# Asked as `tester`, a member of the socket's group (nearby-gateway), never as root.
ask() { runuser -u tester -- python3 /usr/local/bin/gwsock "$sock" ask "$@"; }
expect_reply() {
    local got
    got=$(ask "$1") || fail "$1: $got"
    [ "$got" = "$2" ] || fail "$1 answered '$got', expected '$2'"
    note "$1 -> $got"
}
