//! How much device-local memory an adapter has, and how much of it this
//! process may still allocate.
//!
//! wgpu reports no memory sizes, only binding limits, yet the placement of a
//! proof's data (resident on the device, streamed through it in chunks, or
//! refused) turns on whether the bases and scalars fit. So this module asks
//! the driver underneath: on Vulkan, the device-local heaps and, where the
//! device has `VK_EXT_memory_budget`, the budget the driver grants this
//! process less what the process already uses. Other backends (Metal, DX12)
//! report `None` for now, and the caller then plans without a figure.
//!
//! Every failure is `None`, never a panic: the figures are advice, and a
//! missing one must not stop a proof.

/// The adapter's device-local memory: (bytes this process may still
/// allocate, total bytes), or None where the API reports none.
#[cfg(any(
    windows,
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
))]
pub(crate) fn adapter_memory(adapter: &wgpu::Adapter) -> Option<(u64, u64)> {
    if adapter.get_info().backend != wgpu::Backend::Vulkan {
        return None;
    }
    // SAFETY: the guard is only read from (handles and properties queries),
    // nothing is created or destroyed through it, and it is dropped before
    // this function returns, while `adapter` (and so the instance and the
    // physical device behind it) is still alive.
    let hal = unsafe { adapter.as_hal::<wgpu_hal::api::Vulkan>() }?;
    vulkan::memory(&hal)
}

/// The adapter's device-local memory: (bytes this process may still
/// allocate, total bytes), or None where the API reports none.
#[cfg(not(any(
    windows,
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
)))]
pub(crate) fn adapter_memory(adapter: &wgpu::Adapter) -> Option<(u64, u64)> {
    // wgpu's Vulkan backend is compiled only on the targets above (the same
    // list as wgpu's own cfg for its "vulkan" feature); Metal has no query
    // for this here yet.
    let _ = adapter;
    None
}

#[cfg(any(
    windows,
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd"
))]
mod vulkan {
    use ash::vk;

    /// (free, total) over the device-local heaps of `hal`'s physical device.
    pub(super) fn memory(hal: &wgpu_hal::vulkan::Adapter) -> Option<(u64, u64)> {
        let phd = hal.raw_physical_device();
        let shared = hal.shared_instance();
        let instance = shared.raw_instance();

        // SAFETY: `phd` was enumerated from `instance`, and both outlive this
        // call (wgpu's adapter holds them).
        let exts = unsafe { instance.enumerate_device_extension_properties(phd) }.ok()?;
        let has_budget = exts
            .iter()
            .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::memory_budget::NAME));

        // vkGetPhysicalDeviceMemoryProperties2, the only way to the budget,
        // comes either from VK_KHR_get_physical_device_properties2 (wgpu
        // enables it on every instance that offers it) or from Vulkan 1.1,
        // which needs both the instance and the device at 1.1. ash's table
        // holds a panicking stub for a function the instance did not load, so
        // neither is called unless it is known to be there.
        let khr_loader = shared
            .extensions()
            .contains(&ash::khr::get_physical_device_properties2::NAME)
            .then(|| {
                ash::khr::get_physical_device_properties2::Instance::new(shared.entry(), instance)
            });
        let core_1_1 = shared.instance_api_version() >= vk::API_VERSION_1_1 && {
            // SAFETY: as above; a Vulkan 1.0 function.
            let props = unsafe { instance.get_physical_device_properties(phd) };
            props.api_version >= vk::API_VERSION_1_1
        };

        if has_budget && (khr_loader.is_some() || core_1_1) {
            let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
            let mut props2 = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut budget);
            match &khr_loader {
                // SAFETY: `phd` belongs to `instance`, the function was loaded
                // from an instance that enabled the extension, and the chain
                // is one valid output structure of the device's extension.
                Some(khr) => unsafe {
                    khr.get_physical_device_memory_properties2(phd, &mut props2)
                },
                // SAFETY: as above, with instance and device both at 1.1, so
                // the core function is loaded and usable on `phd`.
                None => unsafe {
                    instance.get_physical_device_memory_properties2(phd, &mut props2)
                },
            }
            let props = props2.memory_properties;
            return from_heaps(&props, Some((&budget.heap_budget, &budget.heap_usage)));
        }

        // SAFETY: as above; a Vulkan 1.0 function.
        let props = unsafe { instance.get_physical_device_memory_properties(phd) };
        from_heaps(&props, None)
    }

    /// Sums the device-local heaps: total from their sizes, free from the
    /// budget less the usage where there is a budget, else the total.
    fn from_heaps(
        props: &vk::PhysicalDeviceMemoryProperties,
        budget: Option<(&[u64; vk::MAX_MEMORY_HEAPS], &[u64; vk::MAX_MEMORY_HEAPS])>,
    ) -> Option<(u64, u64)> {
        let count = (props.memory_heap_count as usize).min(vk::MAX_MEMORY_HEAPS);
        let mut total = 0u64;
        let mut free = 0u64;
        for (i, heap) in props.memory_heaps[..count].iter().enumerate() {
            if !heap.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL) {
                continue;
            }
            total = total.saturating_add(heap.size);
            let heap_free = match budget {
                // The spec bounds the budget by the heap's size; the min
                // keeps a driver that overstates it from reporting more
                // free than there is.
                Some((b, u)) => b[i].min(heap.size).saturating_sub(u[i]),
                None => heap.size,
            };
            free = free.saturating_add(heap_free);
        }
        // Vulkan requires a device-local heap; a device without one has
        // nothing to report.
        (total > 0).then_some((free.min(total), total))
    }
}

#[cfg(test)]
mod tests {
    use super::adapter_memory;

    /// Every Vulkan adapter reports 0 < free <= total; on lavapipe the
    /// device-local heap is host memory.
    #[test]
    fn vulkan_adapters_report_memory() {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends &= wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12;
        let inst = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(inst.enumerate_adapters(wgpu::Backends::all()));
        if adapters.is_empty() {
            println!("no adapter: nothing to check");
            return;
        }
        for a in &adapters {
            let info = a.get_info();
            let mem = adapter_memory(a);
            println!(
                "{} ({:?}): {:?}",
                info.name,
                info.backend,
                mem.map(|(free, total)| format!(
                    "free {free} B ({:.2} GiB), total {total} B ({:.2} GiB)",
                    free as f64 / (1u64 << 30) as f64,
                    total as f64 / (1u64 << 30) as f64
                ))
            );
            if info.backend == wgpu::Backend::Vulkan {
                let (free, total) = mem.expect("a Vulkan adapter reports its memory");
                assert!(0 < free && free <= total, "free {free}, total {total}");
            }
        }
    }
}
