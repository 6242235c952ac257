//! A batch made on several threads, as one array. The rows are cut into
//! pieces; each thread claims the next piece, makes it into a batch it
//! reuses from piece to piece, and copies it into the one result as soon as
//! every piece before it is made (then where its bytes start is known).
//!
//! Why not make the pieces, then join them: the pieces' buffers would be
//! fresh memory, faulted in page by page, then copied and freed, on every
//! call. Here the result is allocated once (its bytes estimated; untouched
//! pages cost nothing), each thread first touches the part of it that it
//! fills, and a piece's buffers serve the thread's next piece.

use std::mem;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use urinorm::fingerprint::Fingerprint;

use super::{Batch, BatchValues, KeyMaker, Offset, OffsetsOut, Rows, Shape};

/// Most rows a piece holds: about a megabyte of keys, still in cache when
/// it is copied.
pub(super) const PIECE_AT_MOST: usize = 1 << 14;

/// Makes every row of `rows` on each thread of `pool`, in pieces of
/// `piece` rows (a multiple of 8, so that each piece's validity bits are
/// whole bytes of the result's): the same batch as one thread makes.
pub(super) fn make_on(
    pool: &rayon::ThreadPool,
    maker: &KeyMaker<'_>,
    made: BatchValues,
    rows: &(impl Rows + ?Sized),
    piece: usize,
) -> Batch {
    debug_assert!(piece % 8 == 0, "a piece's validity is whole bytes");
    let len = rows.len();
    // Reckoned once: a list's bytes are a pass over all its values.
    let bytes = rows.bytes();
    let (keys, reasons) = room(made, len, bytes);
    let mut result = Batch::sized(made, len, keys);
    if maker.reasons {
        let reasons = Batch::sized(BatchValues::Keys { large: true }, len, reasons);
        result.reasons = Some(Box::new(reasons));
    }
    let bytes_a_row = bytes / len.max(1);
    let late = Mutex::new(Vec::new());
    let lanes = {
        let order = Order::new(lanes(&mut result, piece), len.div_ceil(piece));
        let next = AtomicUsize::new(0);
        pool.broadcast(|_| {
            // Should this thread unwind, the others stop waiting for it.
            let _abandon = Abandon(&order);
            let mut mine = Mine::default();
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= order.pieces {
                    break;
                }
                let mut batch = mine.spare.pop().unwrap_or_else(|| {
                    Batch::made(made, piece, piece * bytes_a_row, maker.reasons)
                });
                batch.fill(maker, rows, n * piece..((n + 1) * piece).min(len));
                order.made(n, &mut batch);
                mine.held.push((n, batch));
                mine.place(&order, &late, false);
            }
            mine.place(&order, &late, true);
        });
        order.into_totals()
    };
    let mut late = late.into_inner().unwrap_or_else(PoisonError::into_inner);
    // In piece order, which is the order of their bytes.
    late.sort_unstable_by_key(|late| late.piece);
    for (n, totals) in lanes.into_iter().enumerate() {
        let batch = lane(&mut result, n);
        batch.data.truncate(totals.placed);
        for late in late.iter().filter(|late| late.lane == n) {
            batch.data.extend_from_slice(&late.bytes);
        }
        debug_assert_eq!(batch.data.len(), totals.bytes, "every piece's bytes");
        batch.nulls = totals.nulls;
    }
    result
}

/// Room for the result's bytes (for `len` values of `bytes` in all), and
/// for its reasons': keys are about as long as their inputs, reasons are
/// sentences for the few rows without a key. Room, not memory: pages never
/// written are never taken.
fn room(made: BatchValues, len: usize, bytes: usize) -> (usize, usize) {
    let keys = match made {
        BatchValues::Keys { .. } => bytes + bytes / 8 + (1 << 16),
        BatchValues::Fingerprints => len * size_of::<Fingerprint>(),
    };
    (keys, len * 8)
}

/// The batches of the result a piece is copied into: the keys, then their
/// reasons when they are made.
fn lanes(result: &mut Batch, piece: usize) -> Vec<Lane<'_>> {
    let Batch {
        shape,
        data,
        validity,
        reasons,
        ..
    } = result;
    let mut all = vec![Lane::new(shape, &mut data[..], validity, piece)];
    if let Some(reasons) = reasons.as_deref_mut() {
        all.extend(lanes(reasons, piece));
    }
    all
}

/// Batch `n` of the lanes of `batch`: itself, or its reasons.
fn lane(batch: &mut Batch, n: usize) -> &mut Batch {
    match n {
        0 => batch,
        _ => lane(
            batch
                .reasons
                .as_deref_mut()
                .expect("a reasons lane has reasons"),
            n - 1,
        ),
    }
}

/// Where one piece's values go in one batch of the result.
struct Place<'a> {
    /// Its rows' offsets (after the first: the one before its first row is
    /// the previous piece's).
    offsets: OffsetsPlace<'a>,
    /// Its rows' validity bytes.
    validity: &'a mut [u8],
    /// Where its bytes start, once every piece before it is made.
    start: usize,
    /// Room for its bytes; `None` when they were past the room estimated.
    bytes: Option<&'a mut [u8]>,
}

/// A piece's share of the result's offsets.
enum OffsetsPlace<'a> {
    Small(&'a mut [i32]),
    Large(&'a mut [i64]),
    /// Fingerprints have none.
    None,
}

impl Place<'_> {
    /// Copies `piece` here; its bytes back when they have no room.
    fn put(self, piece: &mut Batch) -> Option<Vec<u8>> {
        self.validity.copy_from_slice(&piece.validity);
        match (self.offsets, &piece.shape) {
            (OffsetsPlace::Small(to), Shape::Keys(OffsetsOut::Small(from))) => {
                moved(to, from, self.start)
            }
            (OffsetsPlace::Large(to), Shape::Keys(OffsetsOut::Large(from))) => {
                moved(to, from, self.start)
            }
            (OffsetsPlace::None, Shape::Fingerprints { .. }) => {}
            _ => unreachable!("a piece is made as the result is"),
        }
        match self.bytes {
            Some(room) => {
                room.copy_from_slice(&piece.data);
                None
            }
            None => Some(mem::take(&mut piece.data)),
        }
    }
}

/// `from`'s offsets but its first (0), moved `by` bytes further, into `to`.
fn moved<T: Offset>(to: &mut [T], from: &[T], by: usize) {
    for (to, &from) in to.iter_mut().zip(&from[1..]) {
        *to = from.moved(by);
    }
}

/// One batch of the result, shared out among the pieces.
struct Lane<'a> {
    /// Each piece's place, until its thread takes it.
    places: Vec<Option<Place<'a>>>,
    /// Each piece's bytes and nulls, once made and until placed.
    made: Vec<Option<(usize, usize)>>,
    /// The room not yet given to a piece.
    rest: &'a mut [u8],
    totals: Totals,
}

/// A lane's bytes and nulls over the pieces placed, and the bytes that
/// found room.
#[derive(Clone, Copy, Default)]
struct Totals {
    bytes: usize,
    nulls: usize,
    placed: usize,
}

impl<'a> Lane<'a> {
    fn new(
        shape: &'a mut Shape,
        data: &'a mut [u8],
        validity: &'a mut [u8],
        piece: usize,
    ) -> Lane<'a> {
        let offsets: Vec<OffsetsPlace<'a>> = match shape {
            Shape::Keys(OffsetsOut::Small(o)) => (o[1..].chunks_mut(piece))
                .map(OffsetsPlace::Small)
                .collect(),
            Shape::Keys(OffsetsOut::Large(o)) => (o[1..].chunks_mut(piece))
                .map(OffsetsPlace::Large)
                .collect(),
            Shape::Fingerprints { .. } => Vec::new(),
        };
        let validity = validity.chunks_mut(piece / 8);
        let mut offsets = offsets.into_iter();
        let places: Vec<_> = validity
            .map(|validity| {
                Some(Place {
                    offsets: offsets.next().unwrap_or(OffsetsPlace::None),
                    validity,
                    start: 0,
                    bytes: None,
                })
            })
            .collect();
        Lane {
            made: vec![None; places.len()],
            places,
            rest: data,
            totals: Totals::default(),
        }
    }

    /// Gives piece `n`, made, the next bytes of the result: room, if it
    /// fits and every piece before it did.
    fn place(&mut self, n: usize) {
        let (bytes, nulls) = self.made[n].take().expect("placed once made");
        let place = self.places[n].as_mut().expect("placed once");
        place.start = self.totals.bytes;
        if bytes <= self.rest.len() && self.totals.placed == self.totals.bytes {
            let (room, rest) = mem::take(&mut self.rest).split_at_mut(bytes);
            place.bytes = Some(room);
            self.rest = rest;
            self.totals.placed += bytes;
        }
        self.totals.bytes += bytes;
        self.totals.nulls += nulls;
    }
}

/// What the threads share: which pieces are made, and where each goes.
struct Order<'a> {
    state: Mutex<State<'a>>,
    /// Told each time `known` grows (or a thread gives up).
    known_more: Condvar,
    pieces: usize,
}

struct State<'a> {
    lanes: Vec<Lane<'a>>,
    /// The pieces before this one have a place.
    known: usize,
    /// A thread unwound: no piece after its own will get a place.
    abandoned: bool,
}

impl<'a> Order<'a> {
    fn new(lanes: Vec<Lane<'a>>, pieces: usize) -> Order<'a> {
        let state = State {
            lanes,
            known: 0,
            abandoned: false,
        };
        Order {
            state: Mutex::new(state),
            known_more: Condvar::new(),
            pieces,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<'a>> {
        // A poisoned lock means a thread unwound; the call fails with its
        // panic, and the others need only finish.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Piece `n` is made: it, and every made piece after it, gets a place
    /// if every piece before it has one.
    fn made(&self, n: usize, batch: &mut Batch) {
        let mut state = self.lock();
        for (i, lane) in state.lanes.iter_mut().enumerate() {
            let made = self::lane(batch, i);
            lane.made[n] = Some((made.data.len(), made.nulls));
        }
        let before = state.known;
        while state.known < self.pieces && state.lanes[0].made[state.known].is_some() {
            let known = state.known;
            state.lanes.iter_mut().for_each(|lane| lane.place(known));
            state.known += 1;
        }
        if state.known > before {
            self.known_more.notify_all();
        }
    }

    fn into_totals(self) -> Vec<Totals> {
        let state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        state.lanes.iter().map(|lane| lane.totals).collect()
    }
}

/// Marks the order abandoned if its thread unwinds, so that no other
/// thread waits for a piece that will never be made.
struct Abandon<'o, 'a>(&'o Order<'a>);

impl Drop for Abandon<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().abandoned = true;
            self.0.known_more.notify_all();
        }
    }
}

/// The bytes of a piece that found no room in the result (its room was
/// estimated short): appended, in order, once every thread is done.
struct Late {
    piece: usize,
    lane: usize,
    bytes: Vec<u8>,
}

/// The pieces a thread has made and not yet copied, and the batches it
/// reuses.
#[derive(Default)]
struct Mine {
    held: Vec<(usize, Batch)>,
    spare: Vec<Batch>,
}

impl Mine {
    /// Copies each held piece whose place is known into the result (after
    /// waiting, with `wait`, until every one's is).
    fn place<'a>(&mut self, order: &Order<'a>, late: &Mutex<Vec<Late>>, wait: bool) {
        let ready: Vec<_> = {
            let mut state = order.lock();
            while wait && !state.abandoned && self.held.iter().any(|(n, _)| *n >= state.known) {
                state = (order.known_more.wait(state)).unwrap_or_else(PoisonError::into_inner);
            }
            let known = state.known;
            let (ready, held) = mem::take(&mut self.held)
                .into_iter()
                .partition::<Vec<_>, _>(|(n, _)| *n < known);
            self.held = held;
            let mut ready_with_places = Vec::with_capacity(ready.len());
            for (n, batch) in ready {
                let lanes = state.lanes.iter_mut();
                let places: Vec<_> = lanes
                    .map(|l| l.places[n].take().expect("placed once"))
                    .collect();
                ready_with_places.push((n, places, batch));
            }
            ready_with_places
        };
        for (n, places, mut batch) in ready {
            for (i, place) in places.into_iter().enumerate() {
                if let Some(bytes) = place.put(lane(&mut batch, i)) {
                    let late_one = Late {
                        piece: n,
                        lane: i,
                        bytes,
                    };
                    late.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(late_one);
                }
            }
            self.spare.push(batch);
        }
    }
}
