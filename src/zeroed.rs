//! Large vectors from zeroed pages: the operating system maps them as they are
//! first written (by the threads that fill them), instead of one thread writing
//! gigabytes of zeros first, as `vec![value; n]` of a non-primitive type does.

/// `n` values of `T` whose bytes are all zero.
///
/// # Safety
/// All-zero bytes must be a valid `T` (blst's scalars, whose zero is zero
/// words, and affine points, whose identity is).
pub(crate) unsafe fn zeroed_vec<T>(n: usize) -> Vec<T> {
    const { assert!(std::mem::size_of::<T>().is_multiple_of(8) && std::mem::align_of::<T>() == 8) };
    let words = n * (std::mem::size_of::<T>() / 8);
    let mut zeroed = std::mem::ManuallyDrop::new(vec![0u64; words]);
    let (ptr, cap) = (zeroed.as_mut_ptr(), zeroed.capacity());
    assert_eq!(cap, words, "vec! allocates exactly its length");
    // SAFETY: the same allocation layout (align 8, cap·8 bytes = n·size_of::<T>()),
    // and the caller vouches for all-zero values.
    unsafe { Vec::from_raw_parts(ptr as *mut T, n, n) }
}
