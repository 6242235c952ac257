//! Site rules learned from a crawl's evidence: per host, the rewrites
//! (DustBuster's "DUST rules": Bar-Yossef, Keidar, Schonfeld, WWW 2007)
//! that merge only URLs which served one content, never two contents.
//!
//! Three kinds are tried on each host: dropping one query parameter
//! (session ids, sort orders, print flags, referrer tags the site
//! ignores), a first path segment that aliases the site's root (`/en/…`
//! serving what `/…` serves), and a path the site reads without regard to
//! case. A rule is proposed when what it merges is all right (no group it
//! makes holds two contents) and it has support: at least `min_urls` URLs
//! merged, on at least `min_values` distinct values (of the parameter, of
//! the aliased paths, of the paths). Each proposal carries its evidence.
//!
//! It knows URIs (as the base step wrote them) and their contents; nothing
//! of files or of how contents were found.

use std::collections::{HashMap, HashSet};

use crate::uri::UriRef;

/// What a learned rule does (one line of the rules format).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Rewrite {
    /// `drop-params NAME`: the site ignores the parameter (ASCII case aside).
    DropParam(String),
    /// `rewrite-path ^/SEGMENT/(.*)$ /$1`: the segment aliases the root.
    StripPrefix(String),
    /// `lowercase-path`: the site reads paths without regard to case.
    LowercasePath,
}

/// A learned rule, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnedRule {
    /// The host it is for, as the base step writes it (`=host` in the file).
    pub host: String,
    pub rewrite: Rewrite,
    /// URLs in the groups it merges.
    pub urls: usize,
    /// Keys fewer: each group of `k` URLs is `k - 1` fewer.
    pub merges: usize,
    /// Its evidence beyond the URLs: the distinct values a parameter rule
    /// merged over, or the pairs of URLs a path rule merged (without a
    /// conflict, as every rule's).
    pub support: usize,
}

impl LearnedRule {
    /// What [`LearnedRule::support`] counts: `values` (a parameter rule) or
    /// `pairs` (a path rule).
    pub fn support_unit(&self) -> &'static str {
        match self.rewrite {
            Rewrite::DropParam(_) => "values",
            Rewrite::StripPrefix(_) | Rewrite::LowercasePath => "pairs",
        }
    }

    /// The rule as lines of urinorm's rules format: a comment with its
    /// evidence, then the rule. Learned over forms whose `www.` was
    /// stripped (`www_stripped`), the rule is written for the host with it
    /// too, so that it applies over a preset that keeps `www.`.
    ///
    /// ```
    /// use urinorm::rules::learn::{LearnedRule, Rewrite};
    /// let rule = LearnedRule { host: "a.example".into(), rewrite: Rewrite::DropParam("sort".into()), urls: 30, merges: 20, support: 6 };
    /// assert_eq!(rule.lines(false), "# drop sort: 30 URLs merged (20 keys fewer) over 6 values, conflicts: 0\n=a.example drop-params sort\n");
    /// assert!(rule.lines(true).ends_with("=a.example drop-params sort\n=www.a.example drop-params sort\n"));
    /// ```
    pub fn lines(&self, www_stripped: bool) -> String {
        let over = self.support_unit();
        let (what, rule) = match &self.rewrite {
            Rewrite::DropParam(name) => (format!("drop {name}"), format!("drop-params {name}")),
            Rewrite::StripPrefix(segment) => (
                format!("/{segment}/ aliases /"),
                format!("rewrite-path ^/{}/(.*)$ /$1", regex::escape(segment)),
            ),
            Rewrite::LowercasePath => ("paths read in any case".into(), "lowercase-path".into()),
        };
        let mut lines = format!(
            "# {what}: {} URLs merged ({} keys fewer) over {} {over}, conflicts: 0\n={} {rule}\n",
            self.urls, self.merges, self.support, self.host
        );
        if www_stripped && !self.host.starts_with("www.") {
            lines += &format!("=www.{} {rule}\n", self.host);
        }
        lines
    }
}

/// How much evidence a rule needs.
#[derive(Clone, Copy, Debug)]
pub struct Support {
    /// URLs merged, at least.
    pub min_urls: usize,
    /// Distinct values merged over (a parameter rule), or pairs of URLs
    /// merged (a path rule), at least.
    pub min_values: usize,
}

/// One URL the rules are learned from: its form at the base step, parsed.
struct Form<'f> {
    text: &'f str,
    uri: UriRef<'f>,
    content: u32,
}

/// The rules the URLs `forms` (each with its content, `contents[i]`)
/// support, host by host (hosts in order, each host's rules in the order
/// drop-params by name, aliases by segment, lowercase-path).
pub fn learn(forms: &[&str], contents: &[u32], support: Support) -> Vec<LearnedRule> {
    let mut by_host: HashMap<&str, Vec<Form<'_>>> = HashMap::new();
    for (&text, &content) in forms.iter().zip(contents) {
        let Ok(uri) = UriRef::parse(text) else {
            continue;
        };
        if let Some(host) = uri.host().filter(|h| !h.is_empty() && !h.starts_with('[')) {
            by_host
                .entry(host)
                .or_default()
                .push(Form { text, uri, content });
        }
    }
    let mut hosts: Vec<(&str, Vec<Form<'_>>)> = by_host.into_iter().collect();
    hosts.sort_unstable_by_key(|(host, _)| *host);
    hosts
        .iter()
        .flat_map(|(host, forms)| learn_host(host, forms, support))
        .collect()
}

fn learn_host(host: &str, forms: &[Form<'_>], support: Support) -> Vec<LearnedRule> {
    let mut candidates: Vec<Rewrite> = Vec::new();
    let mut names: Vec<String> = forms
        .iter()
        .flat_map(|f| params(f.uri.query()).map(|(name, _)| name.to_ascii_lowercase()))
        .filter(|name| !name.is_empty() && rule_safe(name))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    names.sort_unstable();
    candidates.extend(names.into_iter().map(Rewrite::DropParam));
    let mut segments: Vec<String> = forms
        .iter()
        .filter_map(|f| first_segment(f.uri.path()).map(|(segment, _)| segment.to_string()))
        .filter(|s| rule_safe(s))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    segments.sort_unstable();
    candidates.extend(segments.into_iter().map(Rewrite::StripPrefix));
    if forms
        .iter()
        .any(|f| f.uri.path().bytes().any(|b| b.is_ascii_uppercase()))
    {
        candidates.push(Rewrite::LowercasePath);
    }
    let index: HashMap<&str, usize> = forms.iter().enumerate().map(|(i, f)| (f.text, i)).collect();
    candidates
        .into_iter()
        .filter_map(|rewrite| judge(host, forms, &index, rewrite, support))
        .collect()
}

/// Whether a name can stand in a rules line as itself: no separator, no
/// prefix star, no comment sign.
fn rule_safe(name: &str) -> bool {
    !name
        .bytes()
        .any(|b| b.is_ascii_whitespace() || b == b'*' || b == b'#')
}

/// The query's parameters as (name, value).
fn params(query: Option<&str>) -> impl Iterator<Item = (&str, &str)> {
    query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
}

/// The first segment of `path` and the rest (`/en/a/b` is `en`, `/a/b`),
/// when a rest follows it.
fn first_segment(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix('/')?;
    let (segment, tail) = rest.split_once('/')?;
    (!segment.is_empty() && !tail.is_empty()).then(|| (segment, &path[segment.len() + 1..]))
}

/// What `rewrite` makes of `form` and the value it merges over; `None` if
/// it leaves the form alone.
fn rewritten(form: &Form<'_>, rewrite: &Rewrite) -> Option<(String, String)> {
    let uri = &form.uri;
    let text = form.text;
    // The path is a slice of the text: where it starts is how far in it is.
    let path_start = uri.path().as_ptr() as usize - text.as_ptr() as usize;
    let (before, path) = (&text[..path_start], uri.path());
    let after = &text[path_start + path.len()..];
    match rewrite {
        Rewrite::DropParam(name) => {
            let query = uri.query()?;
            let (kept, dropped): (Vec<_>, Vec<_>) = query
                .split('&')
                .filter(|p| !p.is_empty())
                .partition(|p| !p.split('=').next().unwrap_or("").eq_ignore_ascii_case(name));
            if dropped.is_empty() {
                return None;
            }
            let fragment = uri.fragment().map_or(String::new(), |f| format!("#{f}"));
            let query = match kept.is_empty() {
                true => String::new(),
                false => format!("?{}", kept.join("&")),
            };
            Some((
                format!("{before}{path}{query}{fragment}"),
                dropped.join("&"),
            ))
        }
        Rewrite::StripPrefix(segment) => {
            let (first, rest) = first_segment(path)?;
            (first == segment).then(|| (format!("{before}{rest}{after}"), rest.to_string()))
        }
        Rewrite::LowercasePath => {
            let lower = path.to_ascii_lowercase();
            (lower != path).then(|| (format!("{before}{lower}{after}"), lower))
        }
    }
}

/// The rule `rewrite` on `host`, if what it merges is all one content per
/// group and has `support`.
fn judge(
    host: &str,
    forms: &[Form<'_>],
    index: &HashMap<&str, usize>,
    rewrite: Rewrite,
    support: Support,
) -> Option<LearnedRule> {
    // Each image: the forms that become it, and the values they merge over.
    let mut images: HashMap<String, (Vec<usize>, Vec<String>)> = HashMap::new();
    for (i, form) in forms.iter().enumerate() {
        if let Some((image, value)) = rewritten(form, &rewrite) {
            let entry = images.entry(image).or_default();
            entry.0.push(i);
            entry.1.push(value);
        }
    }
    let (mut urls, mut merges, mut pairs) = (0, 0, 0);
    let mut values: HashSet<&str> = HashSet::new();
    for (image, (members, merged_values)) in &images {
        let mut members = members.clone();
        // A form the rule leaves alone that already is the image.
        if let Some(&i) = index.get(image.as_str())
            && rewritten(&forms[i], &rewrite).is_none()
        {
            members.push(i);
        }
        if members.len() < 2 {
            continue;
        }
        if members
            .iter()
            .any(|&i| forms[i].content != forms[members[0]].content)
        {
            // One group holding two contents: the rule is wrong here.
            return None;
        }
        urls += members.len();
        merges += members.len() - 1;
        pairs += members.len() * (members.len() - 1) / 2;
        values.extend(merged_values.iter().map(String::as_str));
    }
    // A parameter's evidence is the values it merges over: one value
    // (`?lang=en`) is a setting of one page, not a parameter the site
    // ignores. A path rule's is the pairs it merges: a case-insensitive
    // site may have a handful of pages, each spelt many ways.
    let evidence = match rewrite {
        Rewrite::DropParam(_) => values.len(),
        Rewrite::StripPrefix(_) | Rewrite::LowercasePath => pairs,
    };
    (urls >= support.min_urls && evidence >= support.min_values && merges > 0).then(|| {
        LearnedRule {
            host: host.to_string(),
            rewrite,
            urls,
            merges,
            support: evidence,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUPPORT: Support = Support {
        min_urls: 4,
        min_values: 3,
    };

    fn rules(forms: &[(&str, u32)]) -> Vec<String> {
        let (texts, contents): (Vec<&str>, Vec<u32>) = forms.iter().copied().unzip();
        learn(&texts, &contents, SUPPORT)
            .iter()
            .map(|rule| rule.lines(false))
            .map(|lines| lines.lines().nth(1).unwrap().to_string())
            .collect()
    }

    #[test]
    fn an_ignored_parameter_is_dropped_and_an_honoured_one_kept() {
        let forms = [
            ("https://a.com/p", 1),
            ("https://a.com/p?sort=asc", 1),
            ("https://a.com/p?sort=desc", 1),
            ("https://a.com/q?sort=new&id=1", 2),
            ("https://a.com/q?id=1", 2),
            ("https://a.com/q?id=2", 3),
            ("https://a.com/q?id=3", 4),
        ];
        assert_eq!(rules(&forms), ["=a.com drop-params sort"]);
    }

    #[test]
    fn one_conflict_vetoes_a_rule() {
        let forms = [
            ("https://a.com/p", 1),
            ("https://a.com/p?view=a", 1),
            ("https://a.com/p?view=b", 1),
            ("https://a.com/r?view=c", 5),
            ("https://a.com/r", 5),
            ("https://a.com/s?view=d", 6),
            ("https://a.com/s", 7),
        ];
        assert!(rules(&forms).is_empty());
    }

    #[test]
    fn a_path_rule_is_supported_by_pairs_a_parameter_by_values() {
        // Two pages of a case-insensitive site, each spelt five ways: two
        // distinct paths, but twenty pairs merged without a conflict.
        let spellings = [
            ["about", "About", "ABOUT", "aBout", "abouT"],
            ["team", "Team", "TEAM", "tEam", "teaM"],
        ];
        let forms: Vec<(String, u32)> = (spellings.iter().enumerate())
            .flat_map(|(page, names)| names.map(|n| (format!("https://d.org/{n}"), page as u32)))
            .collect();
        let texts: Vec<(&str, u32)> = forms.iter().map(|(t, c)| (t.as_str(), *c)).collect();
        assert_eq!(rules(&texts), ["=d.org lowercase-path"]);
        // One value of one parameter, on as many URLs: not learned.
        let lang: Vec<String> = (0..8)
            .flat_map(|p| {
                [
                    format!("https://e.org/{p}"),
                    format!("https://e.org/{p}?lang=en"),
                ]
            })
            .collect();
        let one_value: Vec<(&str, u32)> = (lang.iter().enumerate())
            .map(|(i, t)| (t.as_str(), i as u32 / 2))
            .collect();
        assert!(rules(&one_value).is_empty());
    }

    #[test]
    fn aliases_and_case_are_learned_with_their_evidence() {
        let mut forms = Vec::new();
        for (i, page) in ["a", "b", "c", "d"].iter().enumerate() {
            forms.push((format!("https://b.org/{page}/x"), i as u32));
            forms.push((format!("https://b.org/en/{page}/x"), i as u32));
            forms.push((format!("https://c.org/{page}/Y"), 10 + i as u32));
            forms.push((format!("https://c.org/{page}/y"), 10 + i as u32));
        }
        let texts: Vec<(&str, u32)> = forms.iter().map(|(t, c)| (t.as_str(), *c)).collect();
        assert_eq!(
            rules(&texts),
            [
                "=b.org rewrite-path ^/en/(.*)$ /$1",
                "=c.org lowercase-path"
            ]
        );
        let (texts, contents): (Vec<&str>, Vec<u32>) = texts.into_iter().unzip();
        let learned = learn(&texts, &contents, SUPPORT);
        assert_eq!(
            (learned[0].urls, learned[0].merges, learned[0].support),
            (8, 4, 4)
        );
    }
}
