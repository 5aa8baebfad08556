//! Host-side Fr helpers (through blst) for twiddle and coset tables: the ones
//! both GPU backends use come from crossgroth-gpu-host.

use blst::blst_fr;

pub use crossgroth_gpu_host::{
    fr_as_u64s, fr_as_u64s_mut, fr_from_canonical, fr_from_u64, fr_inv, fr_mul, fr_one, fr_pow,
    fr_sub, omega, split_power_tables, COSET_GENERATOR, ROOT_OF_UNITY_CANONICAL,
};

/// A field element as a kernel argument (its 4 limbs, passed by value).
pub fn fr_arg(v: &blst_fr) -> [u64; 4] {
    v.l
}
