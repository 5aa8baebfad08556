//! The device pass of a Pippenger MSM (kernels/msm/pippenger.cuh): upload and
//! prepare the scalars, sort them into buckets, accumulate, reduce, and return
//! the window sums for the host to fold.

use blst::blst_fr;
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use std::sync::Arc;

use crate::msm_plan::{
    effective_terms, first_pass_share, msm_passes, ones_threads, pass_ranges, scatter_windows,
    WindowPlan,
};
use crate::profile::Profiler;
use crate::{host, CudaDevice, CudaError, Layout, MsmOptions};

/// Bucket counts per block of the offsets scan (MSM_SCAN_TILE in pippenger.cuh).
const SCAN_TILE: usize = 4096;

/// Partial sums a thread adds in each launch of the trees that reduce the
/// segment sums to window sums and the ones' partial sums to one point. These
/// launches have few threads, so their time is the chain of dependent full
/// additions: 1024 segments at 32 a thread are two launches of 32 additions
/// in a row, at 4 five launches of 4.
const SUM_FAN_IN: u32 = 4;

/// Resident bases as the MSM reads them: `copies` points per base, base-major
/// (index b copies + k), copy k being 2^(c wset k) times the base, where wset
/// = ceil(ceil(256 / c) / copies). One copy: plain bases (c unused).
#[derive(Clone, Copy)]
pub(crate) struct BaseTable<'a> {
    pub buf: &'a CudaSlice<u64>,
    pub len: usize,
    pub copies: u32,
    pub c: u32,
    /// The MSM's first base: it reads bases first.. (of len), so that an input
    /// whose bases begin further in needs no shifted copy of its scalars.
    pub first: usize,
    /// Whether the MSM may upload its scalars on the copy lane beside its
    /// kernels (not while a streamed MSM's uploads hold the lane).
    pub overlap_upload: bool,
}

/// An MSM's scalars (blst_fr in Montgomery form): in host memory, uploaded
/// by the MSM, or already on the device (four words a scalar from `start`).
#[derive(Clone, Copy)]
pub(crate) enum Scalars<'a> {
    Host(&'a [blst_fr]),
    Device {
        buf: &'a CudaSlice<u64>,
        start: usize,
        len: usize,
    },
}

impl<'a> Scalars<'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Scalars::Host(s) => s.len(),
            Scalars::Device { len, .. } => *len,
        }
    }

    /// Scalars lo..hi of these.
    pub(crate) fn sub(&self, lo: usize, hi: usize) -> Scalars<'a> {
        match *self {
            Scalars::Host(s) => Scalars::Host(&s[lo..hi]),
            Scalars::Device { buf, start, len } => {
                assert!(lo <= hi && hi <= len, "scalars {lo}..{hi} of {len}");
                Scalars::Device {
                    buf,
                    start: start + lo,
                    len: hi - lo,
                }
            }
        }
    }
}

impl CudaDevice {
    /// Runs the device MSM; returns Jacobian words (a dummy point, the wset
    /// bucket sets' sums, then the sum of the bases whose scalar is 1) and the
    /// window size, by which the host weighs set s with 2^(c s).
    pub(crate) fn device_msm(
        &self,
        layout: Layout,
        table: BaseTable<'_>,
        scalars: Scalars<'_>,
        density: Option<&[u64]>,
        options: &MsmOptions,
    ) -> Result<(Vec<u64>, u32), CudaError> {
        if table.first > table.len {
            return Err(CudaError::InvalidInput(format!(
                "the MSM starts at base {} of {}",
                table.first, table.len
            )));
        }
        let point_words = layout.affine_words() * table.copies.max(1) as usize;
        let bases = table.buf.slice(table.first * point_words..);
        let n_bases = table.len - table.first;
        let n = scalars.len();
        let jw = layout.jac_words();
        let xw = layout.xyzz_words();
        // Density: validate and build the per-word prefix counts.
        let prefix: Option<Vec<u32>> = match density {
            None => {
                if n > n_bases {
                    return Err(CudaError::InvalidInput(format!(
                        "{n} scalars but only {n_bases} bases"
                    )));
                }
                None
            }
            Some(d) => {
                if d.len() * 64 < n {
                    return Err(CudaError::InvalidInput(format!(
                        "density bitmap has {} bits for {n} scalars",
                        d.len() * 64
                    )));
                }
                let mut p = Vec::with_capacity(d.len());
                let mut acc = 0usize;
                for (i, w) in d.iter().enumerate() {
                    p.push(acc as u32);
                    let bits = if (i + 1) * 64 <= n {
                        *w
                    } else if i * 64 >= n {
                        0
                    } else {
                        w & ((1u64 << (n - i * 64)) - 1)
                    };
                    acc += bits.count_ones() as usize;
                }
                if acc > n_bases {
                    return Err(CudaError::InvalidInput(format!(
                        "density selects {acc} variables but only {n_bases} bases are present"
                    )));
                }
                Some(p)
            }
        };
        if n >= (u32::MAX / 2) as usize
            || n_bases.saturating_mul(table.copies.max(1) as usize) >= (u32::MAX / 2) as usize
        {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }
        // Passes over parts of the scalars (see msm_passes): ranges of multiples
        // of 64 scalars, so that the density's words split cleanly. They hide
        // an upload, so scalars already on the device take one. Their number
        // comes from the plan for every included scalar; a single pass plans
        // again from the general scalars once they are classified.
        let on_device = matches!(scalars, Scalars::Device { .. });
        let choose =
            |terms: usize| WindowPlan::choose(terms, table.copies, table.c, options.window_bits());
        let included = effective_terms(n, density);
        let first_plan = choose(included);
        let passes = if table.overlap_upload && !on_device {
            let nb = first_plan.wset as usize * (1usize << (first_plan.c - 1));
            msm_passes(options.passes(), n, nb)
        } else {
            1
        };
        let share = first_pass_share(options.first_pass_share(), passes);
        let ranges = pass_ranges(n, passes, share);
        let multi = ranges.len() > 1;
        let m_max = ranges.iter().map(|r| r.1 - r.0).max().unwrap_or(0);
        if first_plan.nwin as usize * n >= u32::MAX as usize {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }

        let _g = self.guard();
        let mut prof = Profiler::new(self);
        let ck = &self.k.g[layout.group as usize];
        let words = match scalars {
            Scalars::Host(s) => host::fr_as_u64s(s),
            Scalars::Device { .. } => &[][..],
        };
        // One pass: the scalars go up on this stream before anything else. Several:
        // two buffers that the copy lane fills while the kernels work on the
        // previous pass.
        let mut d_scal: Vec<CudaSlice<u64>> = Vec::with_capacity(2);
        if !multi && !on_device {
            d_scal.push(self.upload_large(words, "MSM scalars")?);
        }
        let (d_density, d_prefix) = match (density, &prefix) {
            (Some(d), Some(p)) => (
                Some(self.upload_u64(d, "density")?),
                Some(
                    self.stream
                        .clone_htod(p)
                        .map_err(|e| CudaError::alloc("density prefix", p.len() * 4, e))?,
                ),
            ),
            _ => (None, None),
        };
        let null: u64 = 0;
        if !multi {
            prof.mark("upload");
        } else {
            for _ in 0..2 {
                d_scal.push(self.alloc_u64(4 * m_max, "MSM scalars")?);
            }
        }
        let mut canon = self.alloc_u64(4 * m_max, "MSM canonical scalars")?;
        let mut bidx = self.alloc_u32(n, "MSM base indices")?;
        let mut one_bases = self.alloc_u32(included, "bases of scalars 1")?;
        // [general scalars, scalars 1]
        let mut counters = self
            .stream
            .alloc_zeros::<u32>(2)
            .map_err(|e| CudaError::alloc("MSM counters", 8, e))?;
        // Classifies scalars lo..hi of pass p into bidx, canon, the ones' list
        // and the counters.
        let classify = |st: &Arc<CudaStream>,
                        scal: &cudarc::driver::CudaView<'_, u64>,
                        lo: usize,
                        hi: usize,
                        canon: &mut CudaSlice<u64>,
                        bidx: &mut CudaSlice<u32>,
                        one_bases: &mut CudaSlice<u32>,
                        counters: &mut CudaSlice<u32>|
         -> Result<(), CudaError> {
            let (m32, lo32) = ((hi - lo) as u32, lo as u32);
            let mut bidx_pass = bidx.slice_mut(lo..hi);
            match (&d_density, &d_prefix) {
                (Some(d), Some(pre)) => {
                    let (d, pre) = (d.slice(lo / 64..), pre.slice(lo / 64..));
                    launch_on!(st, self.k.msm_classify, hi - lo, 256; scal, &m32, &d, &pre, &lo32, canon, &mut bidx_pass, one_bases, counters)
                }
                _ => {
                    launch_on!(st, self.k.msm_classify, hi - lo, 256; scal, &m32, &null, &null, &lo32, canon, &mut bidx_pass, one_bases, counters)
                }
            }
            Ok(())
        };
        // One pass: classify every scalar now, and plan from the general ones.
        let (plan, terms, ones) = if multi {
            (first_plan, None, None)
        } else {
            let scal = match scalars {
                Scalars::Device { buf, start, len } => buf.slice(4 * start..4 * (start + len)),
                Scalars::Host(_) => d_scal[0].slice(0..4 * n),
            };
            classify(
                &self.stream,
                &scal,
                0,
                n,
                &mut canon,
                &mut bidx,
                &mut one_bases,
                &mut counters,
            )?;
            let counted = self
                .stream
                .clone_dtoh(&counters)
                .map_err(|e| CudaError::launch("MSM counters", e))?;
            self.sync("MSM classification")?;
            prof.mark("classify");
            let (general, ones) = (counted[0] as usize, counted[1] as usize);
            (choose(general), Some(general), Some(ones))
        };
        let c = plan.c;
        let k_per_win = 1usize << (c - 1);
        let nwin = plan.nwin as usize;
        // bucket sets: what the reduction and the host see as windows
        let nsets = plan.wset as usize;
        let nb = nsets * k_per_win;
        // the general scalars a pass may have
        let pass_terms = terms.unwrap_or(m_max);
        let max_entries = nwin * terms.unwrap_or(n);
        // Chunk lengths of the accumulation tree: level 0 (points), levels >= 1
        // (partial sums). Small MSMs use short chunks so that tests exercise
        // several levels. Level 1 on has 8 partial sums a thread: with more, the
        // few threads of level 1 run long chains of full additions while the
        // rest of the GPU idles.
        let (l_chunk, l1): (u32, u32) = if max_entries >= 1 << 26 {
            (128, 8)
        } else if max_entries >= 1 << 22 {
            (64, 8)
        } else {
            (8, 4)
        };
        let pass_entries = nwin * pass_terms;
        if max_entries >= u32::MAX as usize {
            return Err(CudaError::InvalidInput(format!(
                "MSM of {n} terms is too large"
            )));
        }
        let nchunks = pass_entries.div_ceil(l_chunk as usize).max(1);
        // Buckets per thread of the running-sum reduction: each thread also
        // multiplies its segment's sum by the segment's first index (~1.5 c
        // additions), so long segments where there are buckets enough to keep
        // the device busy (c = 20: 64 -> 106 000 threads).
        let seg: u32 = (k_per_win as u32).min(if nb >= 1 << 22 { 64 } else { 32 });
        let nseg = k_per_win / seg as usize;
        let c32 = c;
        let nwin32 = nwin as u32;
        let wset32 = plan.wset;
        let stride32 = plan.stride;
        let nsets32 = nsets as u32;
        let nb32 = nb as u32;
        let k32 = k_per_win as u32;

        let mut counts = self
            .stream
            .alloc_zeros::<u32>(nb)
            .map_err(|e| CudaError::alloc("bucket counts", nb * 4, e))?;
        // Sorted entries and bucket offsets: one set here, a second (below)
        // where the device has room for it.
        let mut offsets_sets = vec![self.alloc_u32(nb + 1, "bucket offsets")?];
        let mut entries_sets = vec![self.alloc_u64(pass_entries, "MSM entries")?];
        let mut cursor = self.alloc_u32(nb, "bucket cursor")?;
        // all-zero words are the XYZZ identity (ZZ = 0)
        let mut buckets = self
            .stream
            .alloc_zeros::<u64>(nb * xw)
            .map_err(|e| CudaError::alloc("buckets", nb * xw * 8, e))?;
        // Passes after the first accumulate into empty buckets of their own,
        // then merge them (see msm_bucket_merge).
        let mut pass_buckets = if multi {
            Some(self.alloc_u64(nb * xw, "pass buckets")?)
        } else {
            None
        };
        let mut heads = self.alloc_u64(nchunks * xw, "chunk partials")?;
        let mut heads2 = self.alloc_u64(nchunks.div_ceil(l1 as usize) * xw, "chunk partials")?;
        let mut segs = self.alloc_u64(nsets * nseg * xw, "bucket segments")?;
        // the first launch of the window-sum tree writes the most partials
        let fan_in = SUM_FAN_IN;
        let mut tmp = self.alloc_u64(
            nsets * nseg.div_ceil(fan_in as usize).max(1) * xw,
            "window partials",
        )?;
        // Output: [dummy, nsets set sums, ones]
        let mut out = self
            .stream
            .alloc_zeros::<u64>((nsets + 2) * jw)
            .map_err(|e| CudaError::alloc("MSM out", 0, e))?;
        let tiles = nb.div_ceil(SCAN_TILE);
        let tiles32 = tiles as u32;
        let mut tile_sums = self.alloc_u32(tiles, "bucket tile sums")?;
        let mut tile_offsets = self.alloc_u32(tiles + 1, "bucket tile offsets")?;
        let mut tile_cursor = self.alloc_u32(tiles, "bucket tile offsets")?;
        // With several passes, a second set of entries and offsets where the
        // device has room for it after every other buffer (so that it never
        // takes the room of one the MSM needs), so that pass p + 1 can be
        // sorted while pass p accumulates from the other; otherwise each sort
        // waits for the accumulation before it.
        if multi {
            if let (Ok(o), Ok(e)) = (
                self.alloc_u32(nb + 1, "bucket offsets"),
                self.alloc_u64(pass_entries, "MSM entries"),
            ) {
                offsets_sets.push(o);
                entries_sets.push(e);
            }
        }
        let sets = entries_sets.len();
        prof.mark("alloc");

        // Several passes: the scalars' preparation and sort run on a stream of
        // their own, so that pass p + 1's sort (memory and atomics) runs beside
        // pass p's accumulation (the multiplier) instead of after it; the
        // accumulation waits for its pass's sort, and a sort waits until the
        // accumulation two passes back has read the entries it overwrites.
        // The two kernels share the SMs rather than overlap inside them (the
        // accumulation's blocks fill the register file), so what is won is the
        // wait for the second pass's upload.
        let sort_stream = if multi {
            Some(
                self.ctx
                    .new_stream()
                    .map_err(|e| CudaError::driver("cuStreamCreate", e))?,
            )
        } else {
            None
        };
        let ss = sort_stream.as_ref().unwrap_or(&self.stream);
        let event = |st: &Arc<CudaStream>| {
            st.record_event(None)
                .map_err(|e| CudaError::driver("cuEventRecord", e))
        };
        let wait = |st: &Arc<CudaStream>, e: &CudaEvent| {
            st.wait(e)
                .map_err(|e| CudaError::driver("cuStreamWaitEvent", e))
        };
        // per scalar buffer: an event after the prepare that last read it
        let mut slot_read: [Option<CudaEvent>; 2] = [None, None];
        // per entries set: an event after the accumulation that last read it
        let mut set_read: [Option<CudaEvent>; 2] = [None, None];
        let mut lane_guard = if multi { Some(self.copy_lane()?) } else { None };
        if let Some(guard) = lane_guard.as_ref() {
            // the buffers allocated and cleared on this stream so far
            let ready = event(&self.stream)?;
            wait(ss, &ready)?;
            wait(
                &guard.as_ref().expect("copy lane initialised").stream,
                &ready,
            )?;
        }
        for (p, &(lo, hi)) in ranges.iter().enumerate() {
            let (m, m32) = (hi - lo, (hi - lo) as u32);
            // the pass's general scalars: counted with one pass, at most m
            let general = terms.unwrap_or(m);
            let slot = p % 2;
            let set = p % sets;
            if let Some(guard) = lane_guard.as_mut() {
                let lane = guard.as_mut().expect("copy lane initialised");
                if let Some(read) = &slot_read[slot] {
                    // only the prepare that read this buffer two passes ago, not
                    // every kernel enqueued since (joining the whole stream would
                    // hold this upload back until the previous pass is done)
                    wait(&lane.stream, read)?;
                }
                let mut dst = d_scal[slot].slice_mut(0..4 * m);
                lane.staging
                    .upload(&lane.stream, &words[4 * lo..4 * hi], &mut dst)?;
                let uploaded = event(&lane.stream)?;
                wait(ss, &uploaded)?;
                if p == 0 {
                    wait(&self.stream, &uploaded)?;
                    prof.mark("upload");
                }
            }
            if let Some(read) = &set_read[set] {
                wait(ss, read)?;
            }
            if p > 0 {
                ss.memset_zeros(&mut counts)
                    .map_err(|e| CudaError::driver("bucket counts", e))?;
                if let Some(pb) = pass_buckets.as_mut() {
                    self.stream
                        .memset_zeros(pb)
                        .map_err(|e| CudaError::driver("pass buckets", e))?;
                }
            }
            let target = match pass_buckets.as_mut() {
                Some(pb) if p > 0 => pb,
                _ => &mut buckets,
            };
            if multi {
                let scal = d_scal[slot].slice(0..4 * m);
                classify(
                    ss,
                    &scal,
                    lo,
                    hi,
                    &mut canon,
                    &mut bidx,
                    &mut one_bases,
                    &mut counters,
                )?;
            }
            {
                let bidx_pass = bidx.slice(lo..hi);
                launch_on!(ss, self.k.msm_count_digits, m, 256; &canon, &bidx_pass, &m32, &c32, &nwin32, &wset32, &mut counts);
            }
            let bidx_pass = bidx.slice(lo..hi);
            if multi {
                slot_read[slot] = Some(event(ss)?);
            }
            let offsets = &mut offsets_sets[set];
            let entries = &mut entries_sets[set];
            if !multi {
                prof.mark("prepare");
            }
            // Bucket offsets: tile sums, their scan (one block), each tile's scan.
            launch_on!(ss, self.k.msm_scan_tiles, tiles * 1024, 1024; &counts, &nb32, &mut tile_sums);
            launch_on!(ss, self.k.msm_scan, 1024, 1024; &tile_sums, &tiles32, &mut tile_offsets, &mut tile_cursor);
            launch_on!(ss, self.k.msm_scan_apply, tiles * 1024, 1024; &counts, &nb32, &tile_offsets, &mut *offsets, &mut cursor);
            if !multi {
                prof.mark("scan");
            }
            let per_launch = scatter_windows(nsets, nwin);
            for w_lo in (0..nwin32).step_by(per_launch as usize) {
                let w_hi = w_lo.saturating_add(per_launch).min(nwin32);
                launch_on!(ss, self.k.msm_scatter, m, 256; &canon, &bidx_pass, &m32, &c32, &w_lo, &w_hi, &wset32, &stride32, &mut cursor, &mut *entries);
            }
            if multi {
                // the time the accumulation waits for this pass's sort
                wait(&self.stream, &event(ss)?)?;
                prof.mark_pass(p, ranges.len(), "sort_wait");
            } else {
                prof.mark("scatter");
            }
            // The runs add to the buckets, which keep the earlier passes' sums.
            let chunks = (nwin * general).div_ceil(l_chunk as usize);
            let (entries, offsets) = (&*entries, &*offsets);
            launch!(self, ck.accumulate, chunks, 128; &bases, entries, offsets, &nb32, &l_chunk, &mut *target, &mut heads);
            prof.mark_pass(p, ranges.len(), "accumulate");
            // Levels of partial sums, while the previous level may have had
            // more than one chunk (the device skips levels past the last).
            let mut prev_max = nwin * general;
            let mut prev_l = l_chunk as usize;
            let mut level: u32 = 1;
            while prev_max > prev_l {
                let cur_max = prev_max.div_ceil(prev_l);
                let threads = cur_max.div_ceil(l1 as usize);
                if level % 2 == 1 {
                    launch!(self, ck.accumulate_level, threads, 128; &heads, entries, offsets, &nb32, &l_chunk, &l1, &level, &mut *target, &mut heads2);
                } else {
                    launch!(self, ck.accumulate_level, threads, 128; &heads2, entries, offsets, &nb32, &l_chunk, &l1, &level, &mut *target, &mut heads);
                }
                prev_max = cur_max;
                prev_l = l1 as usize;
                level += 1;
            }
            if multi {
                set_read[set] = Some(event(&self.stream)?);
            }
            prof.mark_pass(p, ranges.len(), "levels");
            if p > 0 {
                if let Some(pb) = pass_buckets.as_ref() {
                    launch!(self, ck.bucket_merge, nb, 128; &mut buckets, pb, &nb32);
                }
                prof.mark_pass(p, ranges.len(), "merge");
            }
        }
        drop(lane_guard);
        // The sort's buffers back to the pool for what follows (the stream
        // waited for the last sort; frees are ordered on this stream).
        drop((d_scal, canon, counts, offsets_sets, cursor, entries_sets));
        drop((tile_sums, tile_offsets, tile_cursor));
        launch!(self, ck.bucket_reduce, nsets * nseg, 64; &buckets, &k32, &nsets32, &seg, &mut segs);
        prof.mark("bucket_reduce");
        // Reduce each window's nseg segment sums to one point, fan_in at a
        // time.
        let mut len = nseg as u32;
        let mut src_is_segs = true;
        while len > 1 {
            let f: u32 = len.min(fan_in);
            let len2 = len.div_ceil(f);
            if src_is_segs {
                launch!(self, ck.sum_groups, nsets32 * len2, 64; &segs, &nsets32, &len, &f, &mut tmp, &len2);
            } else {
                launch!(self, ck.sum_groups, nsets32 * len2, 64; &tmp, &nsets32, &len, &f, &mut segs, &len2);
            }
            src_is_segs = !src_is_segs;
            len = len2;
        }
        {
            let src = if src_is_segs { &segs } else { &tmp };
            let mut dst = out.slice_mut(jw..(nsets + 1) * jw);
            launch!(self, ck.to_jacobian, nsets, 64; src, &nsets32, &mut dst);
        }
        prof.mark("window_sums");
        // Sum of the bases whose scalar is 1, from their list.
        {
            let t = ones_threads(ones.unwrap_or(included));
            let mut a = self.alloc_u64(t as usize * xw, "ones partials")?;
            let mut b =
                self.alloc_u64((t as usize).div_ceil(fan_in as usize) * xw, "ones partials")?;
            let count = counters.slice(1..2);
            launch!(self, ck.ones, t, 64; &bases, &stride32, &one_bases, &count, &mut a, &t);
            let mut len = t;
            let mut in_a = true;
            let one: u32 = 1;
            while len > 1 {
                let f2: u32 = len.min(fan_in);
                let len2 = len.div_ceil(f2);
                if in_a {
                    launch!(self, ck.sum_groups, len2, 64; &a, &one, &len, &f2, &mut b, &len2);
                } else {
                    launch!(self, ck.sum_groups, len2, 64; &b, &one, &len, &f2, &mut a, &len2);
                }
                in_a = !in_a;
                len = len2;
            }
            let src = if in_a { &a } else { &b };
            let mut dst = out.slice_mut((nsets + 1) * jw..(nsets + 2) * jw);
            launch!(self, ck.to_jacobian, 1, 32; src, &one, &mut dst);
        }
        prof.mark("ones");
        let words = self
            .stream
            .clone_dtoh(&out)
            .map_err(|e| CudaError::launch("MSM", e))?;
        prof.mark("download");
        self.sync("MSM")?;
        prof.report(&format!(
            "{} MSM n={n} c={c} nwin={nwin} sets={nsets} copies={} L={l_chunk}/{l1}",
            layout.name, table.copies,
        ));
        drop((d_density, d_prefix, bidx, one_bases, counters));
        drop(sort_stream);
        drop((buckets, heads, heads2, segs, tmp));
        Ok((words, c))
    }
}
