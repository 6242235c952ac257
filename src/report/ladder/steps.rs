//! The steps a report measures, in order: the RFC rungs, the ladder's
//! presets, maybe `--with` and the site rules, maybe a preset beside the
//! ladder; which step each is compared with; and what the attribution
//! works through alone (each transform, each rules file).
//!
//! It knows what each step's normalizer is and how a step's line of the
//! table is made from its counts; nothing of lines, passes or evidence.

use std::time::Duration;

use super::{MAX_ATTRIBUTED_RULES_FILES, Merge, Options, StepKind, StepReport};
use crate::normalize::protocol::{PRESETS, Preset, Protocol, Transform};
use crate::normalize::{Normalizer, Rung};

/// One step of the report.
#[derive(Clone, Debug)]
pub struct Step {
    pub kind: StepKind,
    pub(super) normalizer: Normalizer,
    /// The index of the step it is compared with: the one before it on the
    /// ladder, the scheme rung for a preset beside it; none for the first.
    pub(super) over: Option<usize>,
    /// Lines a crawler cannot fetch are rejected at it, as `dedup` rejects
    /// them for its preset ([`super::PresetStep::fetchable`]).
    pub(super) fetchable: bool,
}

impl Step {
    /// The step it is compared with, among `steps` (which it is one of).
    pub(super) fn below<'s>(&self, steps: &'s [Step]) -> Option<&'s Step> {
        self.over.map(|o| &steps[o])
    }
}

/// The steps for `options`: the three RFC rungs, the presets, maybe
/// `--with`, each over the one before; maybe a preset beside them, over the
/// scheme rung; then maybe the rules, over the preset named with them
/// (`--preset safe --rules R`: `protocol:safe+rules`), or else over the
/// ladder's last step (`+rules`).
pub fn steps(options: &Options) -> Vec<Step> {
    fn climb(steps: &mut Vec<Step>, kind: StepKind, normalizer: Normalizer) {
        steps.push(Step {
            kind,
            normalizer,
            over: steps.len().checked_sub(1),
            fetchable: false,
        });
    }
    let mut steps = Vec::new();
    for rung in RFC_RUNGS {
        climb(&mut steps, StepKind::Rung(rung), Normalizer::new(rung));
    }
    for preset in ladder_presets() {
        let normalizer = Normalizer::with_protocol(Protocol::from(*preset));
        climb(&mut steps, StepKind::Preset(preset), normalizer);
    }
    if let (Some(t), Some(last)) = (options.with, ladder_presets().last()) {
        let mut protocol = Protocol::from(*last);
        protocol.add(t);
        let normalizer = Normalizer::with_protocol(protocol);
        climb(&mut steps, StepKind::PresetPlus(t), normalizer);
    }
    if let Some(beside) = options.preset.filter(|p| !p.preset.ladder) {
        steps.push(Step {
            kind: StepKind::Preset(beside.preset),
            normalizer: Normalizer::with_protocol(Protocol::from(*beside.preset)),
            over: Some(rung_index(Rung::Scheme)),
            fetchable: beside.fetchable,
        });
    }
    if let Some(rules) = &options.rules {
        let named = options.preset.map(|p| p.preset);
        let over = match named {
            Some(preset) => (steps.iter()).rposition(|s| s.kind == StepKind::Preset(preset)),
            // No preset named, so none beside the ladder: its last step.
            None => Some(steps.len() - 1),
        }
        .expect("the preset named is a step");
        let below = &steps[over];
        steps.push(Step {
            kind: StepKind::Rules(named),
            normalizer: (below.normalizer.clone()).with_rules(rules.all.clone().into_rewrite()),
            over: Some(over),
            fetchable: below.fetchable,
        });
    }
    steps
}

/// What a class is worked through alone, for the attribution: each
/// attributed transform on its own, then each rules file on its own.
pub(super) struct SingleSteps {
    pub(super) transforms: Vec<Transform>,
    pub(super) singles: Vec<Normalizer>,
    pub(super) rules_files: Vec<Normalizer>,
}

impl SingleSteps {
    pub(super) fn new(options: &Options) -> SingleSteps {
        let transforms = attributed();
        let singles = transforms
            .iter()
            .map(|&t| {
                let mut single = Protocol::none();
                single.add(t);
                Normalizer::with_protocol(single)
            })
            .collect();
        let rules_files = options
            .rules
            .iter()
            .flat_map(|r| &r.files)
            .take(MAX_ATTRIBUTED_RULES_FILES)
            .map(|(_, rules)| {
                Normalizer::with_protocol(Protocol::none()).with_rules(rules.clone().into_rewrite())
            })
            .collect();
        SingleSteps {
            transforms,
            singles,
            rules_files,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.transforms.len() + self.rules_files.len()
    }
}

/// The rungs the first pass counts line by line, in order; the protocol
/// steps start from the last.
pub(super) const RFC_RUNGS: [Rung; 3] = [Rung::String, Rung::Syntax, Rung::Scheme];

/// The presets that are steps: not the compatibility ones (`ia`).
fn ladder_presets() -> impl DoubleEndedIterator<Item = &'static Preset> {
    PRESETS.iter().filter(|p| p.ladder)
}

/// The transforms whose merges are attributed: every one in a step's preset.
fn attributed() -> Vec<Transform> {
    Transform::ALL
        .into_iter()
        .filter(|t| ladder_presets().any(|p| p.transforms().any(|u| u == *t)))
        .collect()
}

/// The position of `rung` in [`RFC_RUNGS`].
pub(super) fn rung_index(rung: Rung) -> usize {
    RFC_RUNGS
        .iter()
        .position(|&r| r == rung)
        .expect("one of the RFC rungs")
}

/// One line of the table, from its step's classes; `before` are the lines
/// of the steps before it.
pub(super) fn step_report(
    step: &Step,
    distinct: u64,
    rejected: u64,
    time: Duration,
    examples: Vec<Merge>,
    before: &[StepReport],
) -> StepReport {
    let over = step.over.map(|o| &before[o]);
    StepReport {
        kind: step.kind,
        name: step.kind.name(),
        over: over.map(|r| r.name.clone()),
        distinct,
        collapsed: over.map_or(0, |r| r.distinct as i64 - distinct as i64),
        rejected,
        seconds: time.as_secs_f64(),
        examples,
        evidence: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LadderRules, PresetStep};
    use super::*;
    use crate::rules::{RulesFormat, RulesText, SiteRules};

    /// Each step's name, the name of the step it is over, and whether it
    /// takes only what a crawler can fetch.
    fn shape(steps: &[Step]) -> Vec<(String, Option<String>, bool)> {
        (steps.iter())
            .map(|s| {
                let over = s.below(steps).map(|b| b.kind.name());
                (s.kind.name(), over, s.fetchable)
            })
            .collect()
    }

    fn named(rows: &[(&str, Option<&str>, bool)]) -> Vec<(String, Option<String>, bool)> {
        (rows.iter())
            .map(|&(name, over, fetchable)| (name.into(), over.map(Into::into), fetchable))
            .collect()
    }

    fn rules(text: &str) -> SiteRules {
        let text = RulesText {
            name: "site.rules".into(),
            format: RulesFormat::Lines,
            text: text.into(),
        };
        SiteRules::compile(&[text]).expect("valid rules")
    }

    #[test]
    fn the_ladder_climbs_rung_by_rung_then_preset_by_preset() {
        assert_eq!(
            shape(&steps(&Options::default())),
            named(&[
                ("string", None, false),
                ("syntax", Some("string"), false),
                ("scheme", Some("syntax"), false),
                ("protocol:safe", Some("scheme"), false),
                ("protocol:aggressive", Some("protocol:safe"), false),
            ])
        );
    }

    #[test]
    fn with_and_rules_climb_on_and_a_preset_beside_is_over_the_scheme_rung() {
        let ia = PRESETS.iter().find(|p| p.name == "ia").unwrap();
        let all = rules("wiki.example lowercase-path\n");
        let options = Options {
            with: Some(Transform::LowercasePath),
            rules: Some(LadderRules {
                all: all.clone(),
                files: vec![("site.rules".into(), all)],
            }),
            preset: Some(PresetStep {
                preset: ia,
                fetchable: true,
            }),
            ..Options::default()
        };
        let shaped = shape(&steps(&options));
        assert_eq!(
            shaped[4..],
            named(&[
                ("protocol:aggressive", Some("protocol:safe"), false),
                ("+lowercase-path", Some("protocol:aggressive"), false),
                ("protocol:ia", Some("scheme"), true),
                ("protocol:ia+rules", Some("protocol:ia"), true),
            ])
        );
        assert_eq!(SingleSteps::new(&options).len(), attributed().len() + 1);
        let unnamed = Options {
            preset: None,
            ..options.clone()
        };
        assert_eq!(
            shape(&steps(&unnamed))[5..],
            named(&[
                ("+lowercase-path", Some("protocol:aggressive"), false),
                ("+rules", Some("+lowercase-path"), false),
            ])
        );
    }

    #[test]
    fn rules_are_measured_over_the_preset_named_with_them() {
        let safe = PRESETS.iter().find(|p| p.name == "safe").unwrap();
        let all = rules("wiki.example lowercase-path\n");
        let options = Options {
            rules: Some(LadderRules {
                all: all.clone(),
                files: vec![("site.rules".into(), all)],
            }),
            preset: Some(PresetStep {
                preset: safe,
                fetchable: false,
            }),
            ..Options::default()
        };
        let steps = steps(&options);
        assert_eq!(
            shape(&steps)[4..],
            named(&[
                ("protocol:aggressive", Some("protocol:safe"), false),
                ("protocol:safe+rules", Some("protocol:safe"), false),
            ])
        );
        let protocol = |s: &Step| s.normalizer.protocol().unwrap().transforms().count();
        assert_eq!(protocol(&steps[5]), protocol(&steps[3]));
    }

    #[test]
    fn a_preset_the_ladder_shows_adds_no_step() {
        let safe = PRESETS.iter().find(|p| p.name == "safe").unwrap();
        let options = Options {
            preset: Some(PresetStep {
                preset: safe,
                fetchable: false,
            }),
            ..Options::default()
        };
        assert_eq!(steps(&options).len(), 5);
    }

    #[test]
    fn the_transforms_attributed_are_the_ladder_presets_own() {
        let attributed = attributed();
        let aggressive = PRESETS.iter().find(|p| p.name == "aggressive").unwrap();
        // Aggressive holds safe: together they are every ladder transform.
        assert_eq!(attributed.len(), aggressive.transforms().count());
        assert!(aggressive.transforms().all(|t| attributed.contains(&t)));
        assert!(!attributed.contains(&Transform::LowercasePath));
    }

    #[test]
    fn a_steps_line_collapses_what_the_step_it_is_over_left() {
        let steps = steps(&Options::default());
        let string = step_report(&steps[0], 10, 1, Duration::ZERO, Vec::new(), &[]);
        assert_eq!((string.over.as_deref(), string.collapsed), (None, 0));
        let before = [string];
        let syntax = step_report(&steps[1], 7, 1, Duration::from_secs(2), Vec::new(), &before);
        assert_eq!(syntax.over.as_deref(), Some("string"));
        assert_eq!(
            (syntax.distinct, syntax.collapsed, syntax.seconds),
            (7, 3, 2.0)
        );
        assert_eq!(rung_index(Rung::Scheme), 2);
    }
}
