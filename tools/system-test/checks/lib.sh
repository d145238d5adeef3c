# shellcheck shell=bash
# Shared helpers for the guest checks (sourced). Each check is one executable in this folder that runs
# inside the guest as root and exits 0 when it passes; its output is the evidence kept in
# /results/logs/<check>.log.
set -euo pipefail
checks_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$checks_dir/../../.." && pwd)

fail() { echo "FAILED: $*"; exit 1; }
note() { echo "-- $*"; }

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds or the deadline passes.
# The guest runs 5-20x slower than the host, so deadlines are generous; polling stops as soon as the
# condition holds.
wait_until() {
    local seconds=$1 what=$2
    shift 2
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within ${seconds}s"
        sleep 0.1
    done
}

# Background processes started by a check are stopped when it exits, passing or not; then the
# devices it made are removed (the next check in the same guest starts clean).
declare -a check_pids=() check_cleanups=()
stop_started() {
    local pid cleanup
    for pid in "${check_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${check_pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    for cleanup in "${check_cleanups[@]}"; do
        eval "$cleanup" || true
    done
}
trap stop_started EXIT
# run-checks' deadline sends SIGTERM: exit through the EXIT trap so nothing outlives the check.
trap 'exit 143' TERM INT
started() { check_pids+=("$1"); }

# bluetooth_start up|down: hci_vhci + BlueZ `btvirt -l2 -L` = two LE-only controllers, hci0 and hci1,
# on one virtual air, left powered up or down (down: the exclusive user channel wants a controller that
# is down, and gateway-ble-bring-up a box whose bluetoothd never ran). Under TCG the kernel's 2 s
# HCI_Reset timeout can expire while btvirt sets up its crypto, so the crypto modules are loaded first
# and btvirt is restarted until both controllers answer. bluetooth_up = bluetooth_start up.
bluetooth_up() { bluetooth_start up; }
bluetooth_start() {
    local power=$1 attempt pid
    modprobe -a af_alg algif_hash algif_skcipher ecb cmac hci_vhci
    for attempt in 1 2 3; do
        # SIGPIPE ignored (it stays so across exec): btvirt dies of it when a client goes away
        # while an event is on its way to it (tools/btvirt-sigpipe/run).
        ( trap '' PIPE; exec btvirt -l2 -L ) > "/tmp/btvirt-$attempt.log" 2>&1 &
        pid=$!
        if wait_for_quietly 20 hci_present && hciconfig hci0 up && hciconfig hci1 up; then
            started "$pid"
            if [ "$power" = down ]; then
                hciconfig hci0 down
                hciconfig hci1 down
            fi
            note "btvirt (pid $pid) serves hci0 and hci1, powered $power (attempt $attempt)"
            return 0
        fi
        note "btvirt attempt $attempt: controllers did not answer; restarting"
        cat "/tmp/btvirt-$attempt.log" || true
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        wait_for_quietly 10 hci_absent || true
    done
    fail "btvirt -l2 -L never gave two working controllers"
}
hci_present() { [ -e /sys/class/bluetooth/hci0 ] && [ -e /sys/class/bluetooth/hci1 ]; }
hci_absent() { [ ! -e /sys/class/bluetooth/hci0 ] && [ ! -e /sys/class/bluetooth/hci1 ]; }
# Like wait_until, but returns 1 instead of failing the check.
wait_for_quietly() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

# gpio_sim_up LABEL LINES [OFFSET=NAME...]: a live gpio-sim device with one bank; sets gpio_sim to its
# configfs name (a variable, not output: the cleanup it registers must not be lost in a subshell).
# Line names let gpioinfo show what the board file calls them.
gpio_sim_up() {
    local label=$1 lines=$2 name="systest$RANDOM" dir pair
    shift 2
    modprobe gpio-sim
    dir=/sys/kernel/config/gpio-sim/$name
    mkdir "$dir" "$dir/bank0"
    echo "$lines" > "$dir/bank0/num_lines"
    echo "$label" > "$dir/bank0/label"
    for pair in "$@"; do
        mkdir "$dir/bank0/line${pair%%=*}"
        echo "${pair#*=}" > "$dir/bank0/line${pair%%=*}/name"
    done
    echo 1 > "$dir/live"
    # A second chip with the same label would be ambiguous to open by label: remove this one after.
    check_cleanups+=("gpio_sim_down $name")
    # shellcheck disable=SC2034  # read by the check that sourced this file
    gpio_sim=$name
}
gpio_sim_down() {
    local dir=/sys/kernel/config/gpio-sim/$1
    echo 0 > "$dir/live"
    rmdir "$dir"/bank0/line* 2>/dev/null || true
    rmdir "$dir/bank0" "$dir"
}
# sim_line NAME OFFSET: the sysfs folder of one simulated line (value, pull).
sim_line() {
    local dir=/sys/kernel/config/gpio-sim/$1
    echo "/sys/devices/platform/$(cat "$dir/dev_name")/$(cat "$dir/bank0/chip_name")/sim_gpio$2"
}
value_is() { [ "$(cat "$(sim_line "$1" "$2")/value")" = "$3" ]; }

# --- the gateway -----------------------------------------------------------------------------------
# Each gateway of a check gets a folder /tmp/gw-NAME (config, socket, state) unless its config says
# otherwise; its log goes to /results/logs/<check>-NAME.log next to the check's own.
check_name=$(basename "$0")
gateway_bin=${NEARBY_GATEWAY_BIN:-}
# Board files ("sim", the Pi boards) from the repository's boards/: a binary in .build finds them above
# itself, one elsewhere (NEARBY_GATEWAY_BIN=/some/folder/nearby-gateway) would find none.
export NEARBY_GATEWAY_BOARDS=${NEARBY_GATEWAY_BOARDS:-$repo/boards}
declare -A gateway_pids=()

need_gateway() {
    [ -n "$gateway_bin" ] || fail "NEARBY_GATEWAY_BIN is not set"
    [ -x "$gateway_bin" ] || fail "$gateway_bin is not an executable visible in the guest"
}

# start_gateway NAME CONFIG [COMMAND PREFIX...]: runs `nearby-gateway run --config CONFIG` in the
# background (through the prefix, e.g. setpriv, when given) and waits until its socket answers PING.
# The socket path is read from the config's [socket] path.
start_gateway() {
    local name=$1 config=$2
    shift 2
    need_gateway
    local log="/results/logs/$check_name-$name.log"
    "$@" "$gateway_bin" run --config "$config" > "$log" 2>&1 &
    gateway_pids[$name]=$!
    started "${gateway_pids[$name]}"
    note "gateway $name started (pid ${gateway_pids[$name]}, config $config, log $log)"
    local sock
    sock=$(gateway_socket "$config")
    if ! "$checks_dir/../guest/gwsock" "$sock" wait 60; then
        tail -n 20 "$log"
        fail "gateway $name: its socket $sock never answered"
    fi
}
gateway_socket() { sed -n 's/^path *= *"\(.*\.sock\)".*/\1/p' "$1" | head -n1; }

# A prefix for start_gateway: the gateway runs as root without CAP_NET_ADMIN (dropped from the bounding
# set, so the exec'd root process never has it). A shared adapter taken down then stays down, as
# under a unit without the capability: the gateway may not bring it up (docs/radio.md).
# shellcheck disable=SC2034  # used by the checks that source this file
no_net_admin=(setpriv --bounding-set=-net_admin --inh-caps=-net_admin --)

# stop_gateway NAME: SIGTERM, then the gateway must exit 0 within 10 s (docs/product.md §10 says 2 s on
# real hardware; the guest is 5-20x slower).
stop_gateway() {
    local name=$1 pid=${gateway_pids[$1]} status=0
    kill -TERM "$pid"
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            kill -KILL "$pid" 2>/dev/null || true
            fail "gateway $name did not exit within 10 s of SIGTERM"
        fi
        sleep 0.1
    done
    wait "$pid" || status=$?
    [ "$status" -eq 0 ] || fail "gateway $name exited with status $status after SIGTERM"
    note "gateway $name stopped cleanly"
}

# record_events NAME SOCKET FILTER...: every event line the gateway sends for those filters, appended
# to /tmp/NAME.events as it arrives.
record_events() {
    local name=$1 sock=$2
    shift 2
    local args=() f
    for f in "$@"; do args+=("SUB $f"); done
    "$checks_dir/../guest/gwsock" "$sock" record "${args[@]}" > "/tmp/$name.events" 2>&1 &
    started $!
}

# wait_event SECONDS FILE REGEX: waits until a line of FILE matches REGEX (grep -E) and prints it.
wait_event() {
    local seconds=$1 file=$2 regex=$3
    wait_until "$seconds" "an event matching '$regex' in $file" grep -Eq -- "$regex" "$file"
    grep -E -- "$regex" "$file" | head -n1
}

# lines_in FILE: how many lines FILE has now; wait_event_since SECONDS FILE N REGEX: like wait_event,
# but only lines after the first N count (a SUB replays retained state first, e.g. the current
# $SYS/power, which must not pass for the change a check is waiting for).
lines_in() { wc -l < "$1"; }
wait_event_since() {
    local seconds=$1 file=$2 from=$3 regex=$4
    # shellcheck disable=SC2317  # called by wait_until
    new_match() { tail -n +"$((from + 1))" "$file" | grep -Eq -- "$regex"; }
    wait_until "$seconds" "an event matching '$regex' in $file after line $from" new_match
    tail -n +"$((from + 1))" "$file" | grep -E -- "$regex" | head -n1
}

# line_since FILE N TEXT: prints the first line after the first N of FILE that contains TEXT (a
# fixed string); status 1 when there is none. (No `<(...)`: the guest has no /dev/fd.)
line_since() { awk -v from="$2" -v text="$3" 'NR > from && index($0, text) { print; found = 1; exit } END { exit !found }' "$1"; }

# ask SOCKET LINE: one request; prints the reply, fails the check on ERR.
ask() { "$checks_dir/../guest/gwsock" "$1" ask "$2" || fail "'$2' was refused"; }

# gateway_stat SOCKET NAME: one number of GET stats, NAME dotted for nested ones (capture.overruns).
gateway_stat() {
    "$checks_dir/../guest/gwsock" "$1" ask "GET stats" | python3 -c '
import json, sys
value = json.loads(sys.stdin.readline().split(" ", 1)[1])
for key in sys.argv[1].split("."):
    value = value[key]
print(value)' "$2"
}
# stat_above SOCKET NAME N: the stat is above N now (for wait_until).
stat_above() { local v; v=$(gateway_stat "$1" "$2") && [ "$v" -gt "$3" ]; }

# ble_config NAME DEVICE EXCLUSIVE [PUBLISH_TYPE [SUBSCRIPTION_LINE]]: a gateway config on the kernel
# transport (board "sim": no LEDs) that publishes systest/PUBLISH_TYPE by BLE (when not empty) and
# subscribes to systest/* by BLE, with a short lost_after_s (plus SUBSCRIPTION_LINE, e.g. an LED).
# Prints the config's path.
ble_config() {
    local name=$1 device=$2 exclusive=$3 type=${4:-} extra=${5:-}
    local dir=/tmp/gw-$name
    rm -rf "$dir"   # nothing left from an earlier run (or from the host's /tmp) may be restored
    mkdir -p "$dir"
    cat > "$dir/gateway.toml" <<TOML
api_key   = "systest-shared-key"
board     = "sim"
log_level = "debug"

[radio]
device       = "$device"
exclusive    = $exclusive
interval_ms  = 100
lost_after_s = 3

[socket]
path = "$dir/gateway.sock"

[state]
path = "$dir/state.json"
defaults = { background_mode = true, permission = "granted", power = "active" }

[[subscription]]
namespace    = "systest"
type         = "*"
mediums      = ["ble"]
mode         = "scan"
lost_after_s = 3
$extra
TOML
    if [ -n "$type" ]; then
        cat >> "$dir/gateway.toml" <<TOML

[[publication]]
namespace = "systest"
type      = "$type"
content   = "hello from $name on $device"
mediums   = ["ble"]
mode      = "broadcast"
TOML
    fi
    echo "$dir/gateway.toml"
}

# restore_config: the gateway of the two boot-restore checks: hci0, a background BLE publication,
# state in /results/state (the results folder outlives the guest; its defaults differ from what the
# first boot sets, so only a restored file explains the second boot's state).
restore_config() {
    local config
    config=$(ble_config box hci0 false from-box)
    sed -i 's|^path = "/tmp/gw-box/state.json"|path = "/results/state/state.json"|' "$config"
    echo 'background = true' >> "$config"
    grep -q '^path = "/results/state/state.json"' "$config" || fail "could not point the state at /results/state"
    echo "$config"
}

# speaker_config: a gateway on hci0 whose only publication is audio, played on hw:Loopback,0,0
# (snd-aloop's playback side) every 2 s. Prints the config's path.
speaker_config() {
    local config
    config=$(ble_config speaker hci0 false)
    cat >> "$config" <<'TOML'

[[publication]]
namespace = "systest"
type      = "by-sound"
content   = "hello through the loopback"
mediums   = ["audio"]
mode      = "broadcast"
TOML
    sed -i 's/^\[socket\]/[audio]\ndevice     = "hw:Loopback,0,0"\nprotocol   = "ultrasound-fast"\nvolume     = 50\ninterval_s = 2\n\n[socket]/' "$config"
    grep -q '^device     = "hw:Loopback,0,0"' "$config" || fail "could not set the speaker's audio device"
    echo "$config"
}
audio_up() {
    modprobe snd-aloop
    wait_until 10 "card Loopback" grep -q Loopback /proc/asound/cards
}

# listener_config: a gateway on hci1 that captures hw:Loopback,1,0 (what speaker_config plays on
# 0,0) and subscribes to systest/* by audio only. Prints the config's path.
listener_config() {
    local config
    config=$(ble_config listener hci1 false)
    sed -i 's/^mediums      = \["ble"\]/mediums      = ["audio"]/' "$config"
    sed -i 's/^\[socket\]/[audio]\ncapture = "hw:Loopback,1,0"\n\n[socket]/' "$config"
    grep -q 'mediums      = \["audio"\]' "$config" || fail "could not make the listener's subscription audio-only"
    grep -q '^capture = "hw:Loopback,1,0"' "$config" || fail "could not set the listener's microphone"
    echo "$config"
}
