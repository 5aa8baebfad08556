//! WGSL sources (embedded from `shaders/`) and their assembly into modules.

/// The shader modules; each is compiled once per backend, on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Module {
    /// Fr: conversions, NTT, H.
    Fr,
    /// Pippenger's counting sort (no field code).
    Sort,
    /// Fq, G1 points, Pippenger buckets/reduction.
    G1,
    /// Fq, Fq2, G2 points, Pippenger buckets/reduction.
    G2,
}

impl Module {
    pub fn name(self) -> &'static str {
        match self {
            Module::Fr => "fr",
            Module::Sort => "msm_sort",
            Module::G1 => "g1",
            Module::G2 => "g2",
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

/// `{f}_ld_Bk` / `{f}_st_Bk` for the five storage buffers: a field element of
/// `words` u32 at word offset `o` (straight-line, no loops).
fn accessors(f: &str, ty: &str, words: usize) -> String {
    let mut s = String::new();
    for k in 1..=5 {
        let ld: Vec<String> = (0..words)
            .map(|i| {
                if i == 0 {
                    format!("B{k}[o]")
                } else {
                    format!("B{k}[o + {i}u]")
                }
            })
            .collect();
        s += &format!(
            "fn {f}_ld_B{k}(o: u32) -> {ty} {{ return {f}_from_words(array<u32, {words}>({})); }}\n",
            ld.join(", ")
        );
        let st: Vec<String> = (0..words)
            .map(|i| {
                if i == 0 {
                    format!("B{k}[o] = w[0];")
                } else {
                    format!("B{k}[o + {i}u] = w[{i}];")
                }
            })
            .collect();
        s += &format!(
            "fn {f}_st_B{k}(o: u32, a: {ty}) {{ let w = {f}_to_words(a); {} }}\n",
            st.join(" ")
        );
    }
    s
}

fn curve_accessors(g2: bool) -> String {
    let mut s = String::new();
    for k in 1..=5 {
        if g2 {
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
        Module::Fr => [BINDINGS, fr, &accessors("fr", "Fr", 8), NTT].join("\n"),
        Module::Sort => SORT.to_string(),
        Module::G1 => [
            BINDINGS,
            fq,
            &accessors("fq", "Fq", 12),
            G1,
            &curve_accessors(false),
            XYZZ,
            PIPPENGER,
        ]
        .join("\n"),
        Module::G2 => [
            BINDINGS,
            fq,
            &accessors("fq", "Fq", 12),
            FQ2,
            G2,
            &curve_accessors(true),
            XYZZ,
            PIPPENGER,
        ]
        .join("\n"),
    }
}
