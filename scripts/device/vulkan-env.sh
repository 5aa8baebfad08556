# Sourced by the wgpu scripts of scripts/device: the Vulkan loader carried in
# .gl (see shared/DEVICE.md) installed, NVIDIA's ICD named, crossgroth
# unpacked from .device; sets $out (logs) and $cg (the binary).
out="${OUT:-device-logs}"
mkdir -p "$out"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
bin=/tmp/crossgroth-bin
mkdir -p "$bin"
[ -x "$bin/crossgroth" ] || { xz -dc .device/crossgroth.xz > "$bin/crossgroth" && chmod +x "$bin/crossgroth"; }
cg="$bin/crossgroth"
