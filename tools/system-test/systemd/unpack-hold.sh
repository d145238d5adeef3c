# shellcheck shell=sh
# The power-cut campaign's hold inside dpkg's unpack (docs/reliability.md, "Power cuts"). Harness only:
# scripts/systemd-test puts these lines at the top of its repacked upgrade's preinst, never into the
# shipped package's scripts. Inert unless the campaign's guest made the marker for an `unpack` cut.
# dpkg runs the new preinst after it noted the package `reinstreq half-installed` (fsync'd, the old
# version still recorded) and before it unpacks a file: the host cuts the power while this waits.
if [ -e /root/systest/hold-in-preinst ]; then
    sync
    echo "CUT-WINDOW unpack preinst $*" > /dev/ttyS1
    # The host cuts within seconds; an hour without a cut is a harness failure, which dpkg unwinds.
    sleep 3600
    exit 1
fi
