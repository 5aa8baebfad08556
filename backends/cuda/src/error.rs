use cudarc::driver::sys::cudaError_enum as CuErr;
use cudarc::driver::DriverError;

/// Everything that can go wrong in the CUDA backend. No function of this crate
/// panics on a missing driver, a missing device or a failed launch; each of those
/// comes back as one of these.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CudaError {
    /// `libcuda` could not be loaded (no NVIDIA driver installed).
    #[error("unavailable: no NVIDIA driver (libcuda could not be loaded)")]
    NoDriver,
    /// The driver is older than the PTX needs.
    #[error("unavailable: NVIDIA driver supports CUDA {found_major}.{found_minor}, CUDA {required_major}.{required_minor} (driver >= 525) is required")]
    DriverTooOld {
        found_major: i32,
        found_minor: i32,
        required_major: i32,
        required_minor: i32,
    },
    /// The driver loaded but reports no device, or not the ordinal asked for.
    #[error("unavailable: no CUDA device{0}")]
    NoDevice(String),
    /// A device allocation failed.
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    /// The PTX module could not be loaded (JIT failure).
    #[error("loading the PTX module failed: {0}")]
    ModuleLoad(String),
    /// A kernel launch or an asynchronous kernel failure. After this the CUDA
    /// context may be unusable: build a new `CudaDevice`.
    #[error("kernel launch failed in {what}: {err}")]
    Launch { what: String, err: String },
    /// A kernel faulted (an illegal address, a trap, a timeout) and left the
    /// process's CUDA state for the device unusable. NVIDIA's driver allows no
    /// further work on the device in this process, in this context or a new
    /// one (a fresh context and the primary context reopened after dropping
    /// every handle both fail with the same error, see tests/fault.rs): only a
    /// new process can use the device again.
    #[error("the CUDA device is unusable in this process after a fault in {what} ({err}); restart the process to use it again")]
    ContextLost { what: String, err: String },
    /// Any other driver call failed.
    #[error("CUDA driver call failed in {what}: {err}")]
    Driver { what: String, err: String },
    /// The caller's input is malformed (lengths, density bitmap, sizes).
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// Driver errors after which, by NVIDIA's documentation, the process is in an
/// inconsistent state and every further CUDA call on the device fails.
fn is_sticky(e: &DriverError) -> bool {
    matches!(
        e.0,
        CuErr::CUDA_ERROR_ILLEGAL_ADDRESS
            | CuErr::CUDA_ERROR_LAUNCH_FAILED
            | CuErr::CUDA_ERROR_LAUNCH_TIMEOUT
            | CuErr::CUDA_ERROR_MISALIGNED_ADDRESS
            | CuErr::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CuErr::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CuErr::CUDA_ERROR_INVALID_PC
            | CuErr::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CuErr::CUDA_ERROR_ASSERT
            | CuErr::CUDA_ERROR_ECC_UNCORRECTABLE
    )
}

impl CudaError {
    /// The error of a failed driver call that is not a launch: out of memory,
    /// a sticky fault of earlier work, or anything else.
    pub(crate) fn driver(what: &str, e: DriverError) -> Self {
        Self::classify(what, e, |what, err| CudaError::Driver { what, err })
    }
    /// The error of a failed launch (or of the wait for it), as [`Self::driver`].
    pub(crate) fn launch(what: &str, e: DriverError) -> Self {
        Self::classify(what, e, |what, err| CudaError::Launch { what, err })
    }
    /// Out of memory, a lost context, or `other` for the rest.
    fn classify(what: &str, e: DriverError, other: fn(String, String) -> Self) -> Self {
        if e.0 == CuErr::CUDA_ERROR_OUT_OF_MEMORY {
            return CudaError::OutOfMemory(what.to_string());
        }
        if is_sticky(&e) {
            return CudaError::ContextLost {
                what: what.to_string(),
                err: format!("{e:?}"),
            };
        }
        other(what.to_string(), format!("{e:?}"))
    }
    pub(crate) fn alloc(what: &str, bytes: usize, e: DriverError) -> Self {
        if e.0 == CuErr::CUDA_ERROR_OUT_OF_MEMORY {
            return CudaError::OutOfMemory(format!("{what}: {bytes} bytes"));
        }
        Self::driver(what, e)
    }
    /// True after a fault that leaves the device unusable in this process
    /// ([`CudaError::ContextLost`]).
    pub fn is_context_lost(&self) -> bool {
        matches!(self, CudaError::ContextLost { .. })
    }
    /// True when the backend reports that CUDA cannot be used on this machine at
    /// all (no driver, old driver, no device), as opposed to a failure of work.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            CudaError::NoDriver | CudaError::DriverTooOld { .. } | CudaError::NoDevice(_)
        )
    }
}
