//! Helpers shared by the wgpu test binaries.

/// The adapter the backend would pick: the first whose name contains
/// CROSSGROTH_WGPU_ADAPTER, else a discrete GPU first; Vulkan, Metal or DX12.
pub fn preferred_adapter() -> Option<wgpu::Adapter> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends &= wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
    let inst = wgpu::Instance::new(desc);
    let want = std::env::var("CROSSGROTH_WGPU_ADAPTER").ok();
    let mut list: Vec<wgpu::Adapter> =
        pollster::block_on(inst.enumerate_adapters(wgpu::Backends::all()))
            .into_iter()
            .filter(|a| match &want {
                Some(w) => a.get_info().name.to_lowercase().contains(&w.to_lowercase()),
                None => true,
            })
            .collect();
    list.sort_by_key(|a| (a.get_info().device_type != wgpu::DeviceType::DiscreteGpu) as u32);
    list.into_iter().next()
}
