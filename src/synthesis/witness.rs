//! The witness pass's constraint system: values in allocation order and a count
//! of constraints, never a linear combination. Recorded shapes
//! ([`super::RecordedShape`]) run circuits through it.
//!
//! Gadgets that build linear combinations outside `enforce`'s closures ask
//! [`ConstraintSystem::is_witness_generator`] to skip them; crossgroth's patched
//! bellperson (patches/bellperson) does so in its SHA-256 additions, where
//! Filecoin's PoRep labelling spends most of its witness pass.

use bellpepper_core::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use ff::Field;

use crate::Scalar;

/// Constraint system for the witness pass: it keeps values and counts constraints,
/// never building a linear combination. It offers bellpepper's witness-generator
/// protocol so circuits that support it can write values in bulk.
pub struct WitnessSystem {
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    enforced: usize,
}

impl WitnessSystem {
    pub fn new(inputs_hint: usize, aux_hint: usize) -> Self {
        WitnessSystem {
            input: Vec::with_capacity(inputs_hint),
            aux: Vec::with_capacity(aux_hint),
            enforced: 0,
        }
    }

    /// A witness pass writing into `input` and `aux` (emptied first), whose pages
    /// an earlier pass already touched: fresh pages of a multi-gigabyte witness
    /// cost the kernel about as much as the pass itself.
    pub fn reusing(mut input: Vec<Scalar>, mut aux: Vec<Scalar>) -> Self {
        input.clear();
        aux.clear();
        WitnessSystem {
            input,
            aux,
            enforced: 0,
        }
    }

    /// Constraints the circuit enforced (counted, never built).
    pub fn enforced(&self) -> usize {
        self.enforced
    }

    /// The input and aux assignments, in allocation order.
    pub fn into_witness(self) -> (Vec<Scalar>, Vec<Scalar>) {
        (self.input, self.aux)
    }
}

impl ConstraintSystem<Scalar> for WitnessSystem {
    type Root = Self;

    fn new() -> Self {
        WitnessSystem::new(0, 0)
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        if self.aux.len().is_multiple_of(super::progress::REPORT_EVERY) {
            super::progress::report(
                (self.aux.len() + self.input.len()) * std::mem::size_of::<Scalar>(),
            );
        }
        Ok(Variable(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        Ok(Variable(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.enforced += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.input.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let (a0, i0) = (self.aux.len(), self.input.len());
        self.aux.resize(a0 + aux_n, Scalar::ZERO);
        self.input.resize(i0 + inputs_n, Scalar::ZERO);
        (&mut self.aux[a0..], &mut self.input[i0..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let i0 = self.input.len();
        self.input.resize(i0 + n, Scalar::ZERO);
        &mut self.input[i0..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let a0 = self.aux.len();
        self.aux.resize(a0 + n, Scalar::ZERO);
        &mut self.aux[a0..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.input
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.aux
    }
}

#[cfg(test)]
mod tests {
    use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
    use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
    use bellperson::gadgets::multieq::MultiEq;
    use bellperson::gadgets::{blake2s::blake2s, multipack, sha256::sha256};
    use rand_core::{RngCore, SeedableRng};

    use super::WitnessSystem;
    use crate::synthesis::{check_witness, synthesize, RecordedShape};
    use crate::Scalar;

    /// bellperson's SHA-256 and BLAKE2s gadgets, the ones Filecoin's labelling and
    /// tree circuits use, over private preimage bits, digests packed into inputs.
    #[derive(Clone)]
    struct HashGadgets(Vec<u8>);

    impl Circuit<Scalar> for HashGadgets {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let bits = multipack::bytes_to_bits(&self.0)
                .into_iter()
                .enumerate()
                .map(|(i, b)| {
                    AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), Some(b))
                        .map(Boolean::from)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let s = sha256(cs.namespace(|| "sha256"), &bits)?;
            multipack::pack_into_inputs(cs.namespace(|| "sha256 digest"), &s)?;
            let b = blake2s(cs.namespace(|| "blake2s"), &bits, b"crossgro")?;
            multipack::pack_into_inputs(cs.namespace(|| "blake2s digest"), &b)
        }
    }

    #[test]
    fn multieq_passes_the_witness_generator_through() {
        // Without crossgroth's bellperson patch MultiEq answers false and the
        // SHA-256 additions build every linear combination.
        let mut ws = WitnessSystem::new(0, 0);
        assert!(MultiEq::new(&mut ws).is_witness_generator());
    }

    #[test]
    fn hash_gadgets_give_the_witness_of_full_synthesis() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for len in [0usize, 1, 55, 56, 64, 119, 200] {
            let mut bytes = vec![0u8; len];
            rng.fill_bytes(&mut bytes);
            let circuit = HashGadgets(bytes);
            let direct = synthesize(circuit.clone()).unwrap();
            let (shape, recorded) = RecordedShape::record(circuit.clone()).unwrap();
            assert_eq!(recorded.as_ref(), Some(&direct), "{len} bytes: recording");
            // The witness pass: values only, its constraint count checked
            // against the recording, a, b, c from the recorded matrices.
            let fast = shape.synthesize(circuit).unwrap();
            assert_eq!(fast.input, direct.input, "{len} bytes: inputs");
            assert_eq!(fast.aux, direct.aux, "{len} bytes: aux");
            assert_eq!(
                (&fast.a, &fast.b, &fast.c),
                (&direct.a, &direct.b, &direct.c)
            );
            assert_eq!(check_witness(&fast), None, "{len} bytes: unsatisfied");
        }
    }
}
