//! Helpers shared by the wgpu test binaries.

/// The adapter the backend would pick: the first whose name contains `name`
/// (ignoring case; `Options::adapter`'s `AdapterChoice::Name`) where given,
/// a discrete GPU first; Vulkan, Metal or DX12, on wgpu's defaults as the
/// backend's instance.
pub fn preferred_adapter(name: Option<&str>) -> Option<wgpu::Adapter> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends &= wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let inst = wgpu::Instance::new(desc);
    let want = name.map(str::to_lowercase);
    let mut list: Vec<wgpu::Adapter> =
        pollster::block_on(inst.enumerate_adapters(wgpu::Backends::all()))
            .into_iter()
            .filter(|a| match &want {
                Some(w) => a.get_info().name.to_lowercase().contains(w),
                None => true,
            })
            .collect();
    list.sort_by_key(|a| (a.get_info().device_type != wgpu::DeviceType::DiscreteGpu) as u32);
    list.into_iter().next()
}

/// Sets `GALLIVM_PERF=nopt` unless the caller chose a value; call it before
/// any wgpu call. Mesa's llvmpipe (lavapipe, CI's software Vulkan) spends
/// minutes in LLVM's optimiser on the elliptic-curve kernels, seconds
/// without it; real GPUs ignore the variable.
pub fn skip_llvm_optimiser() {
    if std::env::var_os("GALLIVM_PERF").is_none() {
        std::env::set_var("GALLIVM_PERF", "nopt");
    }
}

/// The environment variable `name`, if set: for a target's settings helper.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The variable `name` parsed, or `default` where it is unset or unparsable.
pub fn parsed<T: std::str::FromStr>(name: &str, default: T) -> T {
    var(name).and_then(|v| v.parse().ok()).unwrap_or(default)
}
