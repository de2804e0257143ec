//! The two arrays `index.js` shares with the addon, one pair per JavaScript thread: `ctl`
//! (`[offered slot, slot taken, flush wanted]`) and `rec` (the records of settled calls, see
//! [`crate::bridge`]). Sharing memory is what lets a call start without a call back into
//! JavaScript and lets a whole batch settle with one.
//!
//! The only `unsafe` of the package: writing into a typed array's memory. Sound because
//! * the `Float64Array` handle holds a Node-API reference to the array, so its `ArrayBuffer`
//!   (fixed length, never transferred or detached by `index.js`) outlives every write;
//! * each pair lives in a thread-local of its own JavaScript thread and is written only on that
//!   thread, during a native call or the bridge's wake-up callback — while no JavaScript runs,
//!   so nothing reads or writes the memory meanwhile;
//! * every index is checked against the array's length.
#![allow(unsafe_code)]

use napi::bindgen_prelude::Float64Array;

const SLOT: usize = 0;
const TAKEN: usize = 1;
const FLUSH: usize = 2;

/// `ctl` and `rec` of one JavaScript thread.
pub(crate) struct Shared {
    ctl: Float64Array,
    rec: Float64Array,
}

impl Shared {
    /// The arrays `index.js` made; `ctl` needs 3 entries, `rec` at least `min_rec`.
    pub(crate) fn new(ctl: Float64Array, rec: Float64Array, min_rec: usize) -> napi::Result<Self> {
        if ctl.len() < 3 || rec.len() < min_rec {
            return Err(napi::Error::from_reason(
                "redis-atomic: the shared arrays are too small",
            ));
        }
        Ok(Shared { ctl, rec })
    }

    fn ctl(&mut self) -> &mut [f64] {
        // SAFETY: see the module doc (valid, unaliased while no JavaScript runs).
        unsafe { self.ctl.as_mut() }
    }

    /// Takes the slot `index.js` offered for the running method call.
    pub(crate) fn take_slot(&mut self) -> f64 {
        let ctl = self.ctl();
        ctl[TAKEN] = 1.0;
        ctl[SLOT]
    }

    /// Asks the running method's wrapper to schedule a flush.
    pub(crate) fn want_flush(&mut self) {
        self.ctl()[FLUSH] = 1.0;
    }

    /// Room for records, in numbers.
    pub(crate) fn rec_len(&self) -> usize {
        self.rec.len()
    }

    /// Writes `header` then `nums` at `at`; returns where the next record starts, or `None` if
    /// it does not fit.
    pub(crate) fn write(&mut self, at: usize, header: [f64; 3], nums: &[f64]) -> Option<usize> {
        // SAFETY: see the module doc.
        let rec = unsafe { self.rec.as_mut() };
        let end = at.checked_add(3 + nums.len()).filter(|&e| e <= rec.len())?;
        rec[at..at + 3].copy_from_slice(&header);
        rec[at + 3..end].copy_from_slice(nums);
        Some(end)
    }
}
