# shellcheck shell=bash disable=SC2154  # sourced: the variables it reads are set by the script that sources it
# What scripts/systemd-test (amd64) and tools/arm64/guest (arm64) do alike to a Debian root before
# booting it under qemu with systemd as PID 1. Sourced; needs $here (tools/system-test/systemd).

# headless_units ROOT: the console is the driver's, no login prompt on it. What a headless box under
# TCG need not spend minutes on: gettys, the first-boot caches (ldconfig, the journal catalog),
# rfkill. Generators run on every boot and every daemon-reload (the package's postinst and the tests
# reload several times); these find nothing on this box (no GPT disk, TPM, SysV scripts, ssh,
# hibernation image).
headless_units() {
    local root=$1 masked
    echo systest > "$root/etc/hostname"
    : > "$root/etc/machine-id"
    for masked in serial-getty@ttyS0 serial-getty@ttyS1 serial-getty@ttyAMA0 getty@tty1 getty-static ldconfig \
            systemd-journal-catalog-update systemd-update-done systemd-rfkill; do
        ln -sf /dev/null "$root/etc/systemd/system/$masked.service"
    done
    # Early units for what nothing here uses (DRM, EFI, FUSE, binfmt, debugfs, tracefs, huge pages):
    # each is seconds of a loaded TCG boot, and the three boots are the default tier's longest stage.
    for masked in modprobe@drm.service modprobe@efi_pstore.service modprobe@fuse.service systemd-pstore.service \
            systemd-binfmt.service proc-sys-fs-binfmt_misc.automount sys-fs-fuse-connections.mount \
            sys-kernel-debug.mount sys-kernel-tracing.mount dev-hugepages.mount; do
        ln -sf /dev/null "$root/etc/systemd/system/$masked"
    done
    mkdir -p "$root/etc/systemd/system-generators"
    for masked in systemd-gpt-auto-generator systemd-hibernate-resume-generator systemd-ssh-generator \
            systemd-tpm2-generator systemd-sysv-generator systemd-rc-local-generator systemd-getty-generator \
            systemd-system-update-generator systemd-debug-generator; do
        ln -sf /dev/null "$root/etc/systemd/system-generators/$masked"
    done
}

# systest_units ROOT: the test's units (the stand-in devices, btvirt, the driver) installed and enabled
# with links made here, not by a systemctl of the root's architecture.
systest_units() {
    local root=$1 service target
    for service in systest-devices systest-btvirt systest; do
        cp "$here/$service.service" "$root/etc/systemd/system/"
        target=$(sed -n 's/^WantedBy=//p' "$here/$service.service")
        mkdir -p "$root/etc/systemd/system/$target.wants"
        ln -sf "/etc/systemd/system/$service.service" "$root/etc/systemd/system/$target.wants/$service.service"
    done
}
