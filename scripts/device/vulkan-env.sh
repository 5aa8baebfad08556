# Sourced by the wgpu scripts of scripts/device: the Vulkan loader carried in
# .gl (see shared/DEVICE.md) installed, NVIDIA's ICD named, the binaries of
# .device unpacked (unpack.sh); sets $out (logs) and $cg (crossgroth).
. "$(dirname "${BASH_SOURCE[0]}")/unpack.sh"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
cg="$bin/crossgroth"
