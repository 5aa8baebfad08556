//! WGSL sources (embedded from `shaders/`) and their assembly into modules.

use crossgroth_gpu_host::Group;

/// The shader modules; each is compiled once per backend, on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Module {
    /// Fr: conversions, NTT, H, a, b and c from a witness.
    Fr,
    /// Pippenger's counting sort (no field code).
    Sort,
    /// A group's field (Fq; for G2 also Fq2), points, Pippenger's bucket
    /// sums and reduction, fixed-base products.
    Curve(Group),
}

impl Module {
    pub fn name(self) -> &'static str {
        match self {
            Module::Fr => "fr",
            Module::Sort => "msm_sort",
            Module::Curve(Group::G1) => "g1",
            Module::Curve(Group::G2) => "g2",
        }
    }
}

pub const BINDINGS: &str = include_str!("../../../shaders/common/bindings.wgsl");
pub const FR: &str = include_str!("../../../shaders/ff/fr.wgsl");
pub const FQ: &str = include_str!("../../../shaders/ff/fq.wgsl");
pub const FR64: &str = include_str!("../../../shaders/ff/fr64.wgsl");
pub const FQ64: &str = include_str!("../../../shaders/ff/fq64.wgsl");
pub const FQ2: &str = include_str!("../../../shaders/ff/fq2.wgsl");
pub const G1: &str = include_str!("../../../shaders/ec/g1.wgsl");
pub const G2: &str = include_str!("../../../shaders/ec/g2.wgsl");
pub const XYZZ: &str = include_str!("../../../shaders/ec/xyzz.wgsl");
pub const NTT: &str = include_str!("../../../shaders/ntt/ntt.wgsl");
pub const SORT: &str = include_str!("../../../shaders/msm/sort.wgsl");
pub const PIPPENGER: &str = include_str!("../../../shaders/msm/pippenger.wgsl");
pub const FIXED_BASE: &str = include_str!("../../../shaders/setup/fixed_base.wgsl");
pub const SPMV: &str = include_str!("../../../shaders/synthesis/spmv.wgsl");

/// `{f}_ld_Bk` / `{f}_st_Bk` for the five storage buffers: a field element of
/// `words` u32 at word offset `o` (straight-line, no loops).
fn accessors(f: &str, ty: &str, words: usize) -> String {
    // word i of the element at o in buffer k
    let word = |k: usize, i: usize| {
        if i == 0 {
            format!("B{k}[o]")
        } else {
            format!("B{k}[o + {i}u]")
        }
    };
    let mut s = String::new();
    for k in 1..=5 {
        let ld: Vec<String> = (0..words).map(|i| word(k, i)).collect();
        s += &format!(
            "fn {f}_ld_B{k}(o: u32) -> {ty} {{ return {f}_from_words(array<u32, {words}>({})); }}\n",
            ld.join(", ")
        );
        let st: Vec<String> = (0..words)
            .map(|i| format!("{} = w[{i}];", word(k, i)))
            .collect();
        s += &format!(
            "fn {f}_st_B{k}(o: u32, a: {ty}) {{ let w = {f}_to_words(a); {} }}\n",
            st.join(" ")
        );
    }
    s
}

/// `f_ld_Bk` / `f_st_Bk`: the group's base-field element (Fq or Fq2) over
/// the Fq accessors, so that ec/ and msm/ are written once for both groups.
fn curve_accessors(group: Group) -> String {
    let mut s = String::new();
    for k in 1..=5 {
        if group == Group::G2 {
            s += &format!(
                "fn f_ld_B{k}(o: u32) -> F {{ return Fq2(fq_ld_B{k}(o), fq_ld_B{k}(o + 12u)); }}\n\
                 fn f_st_B{k}(o: u32, a: F) {{ fq_st_B{k}(o, a.c0); fq_st_B{k}(o + 12u, a.c1); }}\n"
            );
        } else {
            s += &format!(
                "fn f_ld_B{k}(o: u32) -> F {{ return fq_ld_B{k}(o); }}\n\
                 fn f_st_B{k}(o: u32, a: F) {{ fq_st_B{k}(o, a); }}\n"
            );
        }
    }
    s
}

/// The full WGSL text of a module; `int64` selects the SHADER_INT64 field
/// code (29-bit limbs, u64 accumulators) instead of the portable one.
pub(crate) fn source(m: Module, int64: bool) -> String {
    let (fr, fq) = if int64 { (FR64, FQ64) } else { (FR, FQ) };
    match m {
        Module::Fr => [BINDINGS, fr, &accessors("fr", "Fr", 8), NTT, SPMV].join("\n"),
        Module::Sort => SORT.to_string(),
        Module::Curve(group) => {
            let fq_acc = accessors("fq", "Fq", 12);
            let curve_acc = curve_accessors(group);
            let mut parts = vec![BINDINGS, fq, &fq_acc];
            parts.extend(match group {
                Group::G1 => [G1].as_slice(),
                Group::G2 => [FQ2, G2].as_slice(),
            });
            parts.extend([&curve_acc[..], XYZZ, PIPPENGER, FIXED_BASE]);
            parts.join("\n")
        }
    }
}
