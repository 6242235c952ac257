//! A body answered: its lines made keys, the first line of each key
//! decided, every line given its verdict, part after part of one body.
//! It knows lines and verdicts; how a key is decided is `decide`'s, a
//! forget the committer's.

use super::committer::Job;
use super::decide::Decision;
use super::{Answer, FORGET_VERDICTS, PrintSet, Refused, Service, Shared, VERDICTS};
use crate::pipeline::caps::{NO_SITE, SiteNumbers};
use crate::pipeline::chunks::{Chunk, ChunkBytes};
use crate::pipeline::{Buffers, Fate, Fates, Hashes, Processed, Verdict, process, verdicts};
use crate::store::site_print;

/// What a body asks of its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asking {
    /// Admit the new ones (`/v1/add`).
    Add,
    /// Admit nothing (`/v1/check`).
    Check,
    /// Forget them (`/v1/forget`).
    Forget,
}

/// What the parts of one body answered so far tell the next
/// ([`Service::answer_part`]): the keys whose first line came in an
/// earlier part and was decided new, expired, forgotten or absent, so that
/// a later line of one is `dup`. 16 bytes and a table slot a key, only for
/// those keys (a body of held keys keeps none).
#[derive(Default)]
pub struct Body {
    decided: PrintSet,
    /// The bytes of the parts answered: where the next starts.
    offset: usize,
}

impl Answer {
    fn for_body(body: &[u8]) -> Answer {
        Answer {
            body: Vec::with_capacity(body.len() + body.len() / 8 + 16),
            counts: [0; VERDICTS.len()],
        }
    }

    /// Appends `verdict`'s line with `word` for its word, and counts it
    /// by its place in `words`.
    fn push(&mut self, verdict: &Verdict<'_>, word: &'static str, words: &[&str]) {
        verdict.push_line_as(word, &mut self.body);
        if let Some(n) = words.iter().position(|&w| w == word) {
            self.counts[n] += 1;
        }
    }
}

impl Service {
    /// Answers every line of `body` as `dedup --emit verdict` does, in
    /// order; with `admit`, new keys are admitted (else nothing is).
    pub fn answer(&self, body: &[u8], admit: bool) -> Result<Answer, Refused> {
        let asking = match admit {
            true => Asking::Add,
            false => Asking::Check,
        };
        self.answer_part(body, asking, &mut Body::default())
    }

    /// Forgets the key of every line of `body` (made as [`Service::answer`]
    /// makes keys, a line it rejects rejected alike): the next add answers
    /// them `new`. One line for each line of the body, in order:
    /// `forgotten<TAB>key` for a key the store held (or had pending),
    /// `absent<TAB>key` for one it did not, `dup<TAB>key` for a repeat,
    /// and the lines that are no key as [`Service::answer`] has them. Its
    /// counts are of [`FORGET_VERDICTS`].
    pub fn forget(&self, body: &[u8]) -> Result<Answer, Refused> {
        self.answer_part(body, Asking::Forget, &mut Body::default())
    }

    /// Answers `part`, whole lines of a body answered part by part (a body
    /// streamed in), as [`Service::answer`] or [`Service::forget`] answers
    /// a whole body: `body` carries what the parts before decided, so a
    /// repeat of a key first met in an earlier part is `dup` as in one.
    ///
    /// ```
    /// # use urinorm::line::{Columns, NormalizeLines};
    /// # use urinorm::normalize::{Normalizer, Rung};
    /// # use urinorm::line::key::KeyFormat;
    /// # use urinorm::store::{Access, Config, Store};
    /// use urinorm::service::{Asking, Body, Service, Settings};
    /// # let dir = tempfile::tempdir()?;
    /// # let lines = NormalizeLines::new(Normalizer::new(Rung::Syntax), KeyFormat::Canonical, Columns::default());
    /// # let store = Store::open(dir.path(), &Config::new(lines.key_settings()), Access::Write { wait: false })?;
    /// let service = Service::start(store, lines, Settings::default())?;
    /// let mut body = Body::default();
    /// let first = service.answer_part(b"http://a/\n", Asking::Add, &mut body)?;
    /// let second = service.answer_part(b"http://A/\n", Asking::Add, &mut body)?;
    /// assert_eq!((first.body, second.body), (b"new\thttp://a/\n".to_vec(), b"dup\thttp://a/\n".to_vec()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn answer_part(
        &self,
        part: &[u8],
        asking: Asking,
        body: &mut Body,
    ) -> Result<Answer, Refused> {
        let budgeted = self.shared.settings.budget.is_some();
        let numbers = budgeted.then(SiteNumbers::named);
        let p = self.shared.keys_of(part, body.offset, numbers.as_ref());
        body.offset += part.len();
        let (firsts, classes) = first_lines(&p.prints);
        let fresh: Vec<u128> = firsts
            .iter()
            .copied()
            .filter(|print| !body.decided.contains(print))
            .collect();
        let fresh_sites = match &numbers {
            Some(numbers) => sites_of_fresh(&p, &classes, &firsts, &body.decided, numbers),
            None => Vec::new(),
        };
        let mut fresh_decisions = match asking {
            Asking::Forget => {
                let held = self
                    .shared
                    .run_job(|reply| Job::Forget(fresh.clone(), reply))?;
                held.into_iter()
                    .map(|held| match held {
                        true => Decision::Forgotten,
                        false => Decision::Absent,
                    })
                    .collect()
            }
            _ => self
                .shared
                .decide(&fresh, &fresh_sites, asking == Asking::Add)?,
        }
        .into_iter();
        let decisions: Vec<Decision> = firsts
            .iter()
            .map(|print| match body.decided.contains(print) {
                true => Decision::Repeat,
                false => fresh_decisions
                    .next()
                    .expect("a decision for every fresh key"),
            })
            .collect();
        body.decided.extend(
            firsts
                .iter()
                .zip(&decisions)
                .filter(|&(_, d)| d.is_remembered())
                .map(|(&print, _)| print),
        );
        let fates = Fates::default().group(&p.accepted);
        for (i, &(at, first)) in classes.iter().enumerate() {
            fates.set(i, decisions[at as usize].fate(first));
        }
        let mut answer = Answer::for_body(part);
        for verdict in verdicts(&p, |i| fates.get(i)) {
            let word = match (asking, &verdict) {
                (Asking::Forget, Verdict::Decided(Fate::First, _)) => "forgotten",
                (Asking::Forget, Verdict::Decided(Fate::Seen, _)) => "absent",
                _ => verdict.word(),
            };
            let words = match asking {
                Asking::Forget => &FORGET_VERDICTS[..],
                _ => &VERDICTS[..],
            };
            answer.push(&verdict, word, words);
        }
        Ok(answer)
    }
}

/// The distinct fingerprints of a body, in order of their first line, and
/// for each line which of them it has and whether it is that first line:
/// the first line decides a key, a repeat is `dup` (or `seen`, as its
/// first), as within one dedup run.
fn first_lines(prints: &[u128]) -> (Vec<u128>, Vec<(u32, bool)>) {
    let mut firsts: Vec<u128> = Vec::new();
    let mut first_of: ahash::HashMap<u128, u32> = ahash::HashMap::default();
    let classes = prints
        .iter()
        .map(|&print| {
            let next = firsts.len() as u32;
            let at = *first_of.entry(print).or_insert(next);
            if at == next {
                firsts.push(print);
            }
            (at, at == next)
        })
        .collect();
    (firsts, classes)
}

/// The site of each fresh key of `firsts` (those not in `decided`), in
/// order: its print and its name, from its first line's site number.
fn sites_of_fresh(
    p: &Processed<'_>,
    classes: &[(u32, bool)],
    firsts: &[u128],
    decided: &PrintSet,
    numbers: &SiteNumbers,
) -> Vec<(u64, Vec<u8>)> {
    let mut first_line = vec![0; firsts.len()];
    for (i, &(at, first)) in classes.iter().enumerate() {
        if first {
            first_line[at as usize] = i;
        }
    }
    firsts
        .iter()
        .zip(first_line)
        .filter(|(print, _)| !decided.contains(*print))
        .map(|(_, i)| match p.accepted[i].site {
            NO_SITE => (crate::store::NO_SITE, Vec::new()),
            n => {
                let name = numbers.name(n);
                (site_print(&name), name)
            }
        })
        .collect()
}

impl Shared {
    /// Every line of `part` made a key, with its fingerprint (and with
    /// `sites`, its site's number); `offset` is where the part starts in
    /// its body (only a body's start may hold a BOM).
    fn keys_of<'b>(
        &self,
        part: &'b [u8],
        offset: usize,
        sites: Option<&SiteNumbers>,
    ) -> Processed<'b> {
        let chunk = Chunk {
            source: 0,
            offset,
            bytes: ChunkBytes::Borrowed(part),
            input_bytes: part.len() as u64,
            // A request's lines are each answered, whatever they hold.
            binary: false,
        };
        let hashes = Hashes {
            fingerprints: true,
            sites,
            ..Hashes::default()
        };
        process(
            chunk,
            Buffers::default(),
            &self.lines,
            hashes,
            &self.options,
        )
    }
}
