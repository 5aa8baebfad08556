// PTX carry-chain primitives (32-bit limbs).
//
// Each helper is one PTX instruction. A chain of them (add.cc / addc.cc / ... /
// addc) passes the carry flag from one asm statement to the next; nothing that
// clobbers the flag is placed between the statements of one chain.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned char u8;

namespace ptx {

#ifndef CROSSGROTH_HOST_EMULATION
__device__ __forceinline__ u32 add_cc(u32 a, u32 b) { u32 r; asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 addc_cc(u32 a, u32 b) { u32 r; asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 addc(u32 a, u32 b) { u32 r; asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 sub_cc(u32 a, u32 b) { u32 r; asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 subc_cc(u32 a, u32 b) { u32 r; asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 subc(u32 a, u32 b) { u32 r; asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 mad_lo_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ u32 madc_lo_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ u32 mad_hi_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ u32 madc_hi(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ u32 mul_lo(u32 a, u32 b) { u32 r; asm volatile("mul.lo.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 mul_hi(u32 a, u32 b) { u32 r; asm volatile("mul.hi.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ u32 madc_hi_cc(u32 a, u32 b, u32 c) { u32 r; asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
#else
// The same instructions on the host (scripts/cuda/emu/cuda_emu.h): the carry
// flag is a variable of the thread, with PTX's semantics (a borrow sets it on
// subtraction).
inline u32& carry_flag() { static thread_local u32 cc = 0; return cc; }
inline u32 add_cc(u32 a, u32 b) { u64 v = (u64)a + b; carry_flag() = (u32)(v >> 32); return (u32)v; }
inline u32 addc_cc(u32 a, u32 b) { u64 v = (u64)a + b + carry_flag(); carry_flag() = (u32)(v >> 32); return (u32)v; }
inline u32 addc(u32 a, u32 b) { return a + b + carry_flag(); }
inline u32 sub_cc(u32 a, u32 b) { u64 v = (u64)a - b; carry_flag() = a < b; return (u32)v; }
inline u32 subc_cc(u32 a, u32 b) { u64 need = (u64)b + carry_flag(); u32 r = (u32)((u64)a - need); carry_flag() = (u64)a < need; return r; }
inline u32 subc(u32 a, u32 b) { return a - b - carry_flag(); }
inline u32 mad_lo_cc(u32 a, u32 b, u32 c) { u64 v = (u64)(u32)((u64)a * b) + c; carry_flag() = (u32)(v >> 32); return (u32)v; }
inline u32 madc_lo_cc(u32 a, u32 b, u32 c) { u64 v = (u64)(u32)((u64)a * b) + c + carry_flag(); carry_flag() = (u32)(v >> 32); return (u32)v; }
inline u32 mad_hi_cc(u32 a, u32 b, u32 c) { u64 v = (((u64)a * b) >> 32) + c; carry_flag() = (u32)(v >> 32); return (u32)v; }
inline u32 madc_hi(u32 a, u32 b, u32 c) { return (u32)(((u64)a * b) >> 32) + c + carry_flag(); }
inline u32 mul_lo(u32 a, u32 b) { return (u32)((u64)a * b); }
inline u32 mul_hi(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
inline u32 madc_hi_cc(u32 a, u32 b, u32 c) { u64 v = (((u64)a * b) >> 32) + c + carry_flag(); carry_flag() = (u32)(v >> 32); return (u32)v; }
#endif

}  // namespace ptx
