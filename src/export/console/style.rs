//! Small pure helpers of the console exporter: whether to colour, ANSI
//! codes, human units, and width-aware truncation. No I/O.

/// Whether console output gets ANSI colours. As in Node's own console,
/// `FORCE_COLOR` wins when set (`0`/`false` turn colour off, any other value,
/// empty included, turns it on); otherwise `NO_COLOR` set to a non-empty
/// value (the no-color.org rule), `NODE_DISABLE_COLORS` or `TERM=dumb` turn it
/// off; otherwise colour iff stdout is a terminal. `env` looks a variable up.
pub fn color_enabled(stdout_is_tty: bool, env: &dyn Fn(&str) -> Option<String>) -> bool {
    if let Some(force) = env("FORCE_COLOR") {
        let force = force.trim().to_ascii_lowercase();
        return force != "0" && force != "false";
    }
    if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    if env("NODE_DISABLE_COLORS").is_some() || env("TERM").is_some_and(|t| t == "dumb") {
        return false;
    }
    stdout_is_tty
}

/// ANSI SGR codes used by the renderer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    Bold,
    Dim,
    Red,
    Yellow,
    Cyan,
    Magenta,
    Green,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Bold => "1",
            Paint::Dim => "2",
            Paint::Red => "31",
            Paint::Yellow => "33",
            Paint::Cyan => "36",
            Paint::Magenta => "35",
            Paint::Green => "32",
        }
    }
}

/// Appends `text` to `out`, wrapped in `paint` when `color` is on. Padding is
/// computed on the plain text before this is called, so escapes never count
/// towards a column.
pub fn push_painted(out: &mut String, text: &str, paint: Option<Paint>, color: bool) {
    match paint {
        Some(p) if color && !text.is_empty() => {
            out.push_str("\x1b[");
            out.push_str(p.code());
            out.push('m');
            out.push_str(text);
            out.push_str("\x1b[0m");
        }
        _ => out.push_str(text),
    }
}

/// A duration in the unit a person reads fastest, at most 3 significant
/// digits: `850 ns`, `12.3 µs`, `1.50 ms`, `412 ms`, `1.52 s`, `2m05s`.
pub fn human_duration(nanos: u64) -> String {
    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;
    if nanos < US {
        return format!("{nanos} ns");
    }
    if nanos >= 60 * S {
        let secs = nanos / S;
        let (h, m, s) = (secs / 3600, (secs / 60) % 60, secs % 60);
        return if h > 0 {
            format!("{h}h{m:02}m")
        } else {
            format!("{m}m{s:02}s")
        };
    }
    let (value, unit) = if nanos < MS {
        (nanos as f64 / US as f64, "µs")
    } else if nanos < S {
        (nanos as f64 / MS as f64, "ms")
    } else {
        (nanos as f64 / S as f64, "s")
    };
    // Round first so 999.6 ms prints as `1000 ms` rather than `1.00e3`.
    if value >= 99.95 {
        format!("{value:.0} {unit}")
    } else if value >= 9.995 {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}

/// A token count in at most 5 characters: `56`, `1234`, `12.3k`, `4.5M`.
pub fn human_count(n: i64) -> String {
    let a = n.unsigned_abs();
    let sign = if n < 0 { "-" } else { "" };
    if a < 10_000 {
        format!("{n}")
    } else if a < 1_000_000 {
        format!("{sign}{:.1}k", a as f64 / 1e3)
    } else {
        format!("{sign}{:.1}M", a as f64 / 1e6)
    }
}

/// Display width in columns, counting one per `char` (terminal glyphs used
/// here are all single-width; wide CJK names may overrun, which is harmless).
pub fn width(s: &str) -> usize {
    s.chars().count()
}

/// `s` cut to at most `max` columns, ending in `…` when it was cut.
/// Control characters (a newline in an error message) become spaces so one
/// span stays on one line.
pub fn truncate(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4));
    let total = width(s);
    for (n, c) in s.chars().enumerate() {
        if total > max && n + 1 == max {
            out.push('…');
            return out;
        }
        if n == max {
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn colour_follows_tty_without_env() {
        assert!(color_enabled(true, &env_of(&[])));
        assert!(!color_enabled(false, &env_of(&[])));
    }

    #[test]
    fn no_color_and_dumb_terminals_turn_colour_off() {
        assert!(!color_enabled(true, &env_of(&[("NO_COLOR", "1")])));
        assert!(color_enabled(true, &env_of(&[("NO_COLOR", "")])));
        assert!(!color_enabled(true, &env_of(&[("TERM", "dumb")])));
        assert!(!color_enabled(
            true,
            &env_of(&[("NODE_DISABLE_COLORS", "1")])
        ));
    }

    #[test]
    fn force_color_wins_both_ways() {
        assert!(color_enabled(false, &env_of(&[("FORCE_COLOR", "1")])));
        assert!(color_enabled(false, &env_of(&[("FORCE_COLOR", "")])));
        assert!(color_enabled(
            false,
            &env_of(&[("FORCE_COLOR", "3"), ("NO_COLOR", "1")])
        ));
        assert!(!color_enabled(true, &env_of(&[("FORCE_COLOR", "0")])));
        assert!(!color_enabled(true, &env_of(&[("FORCE_COLOR", "false")])));
    }

    #[test]
    fn durations_read_in_human_units() {
        assert_eq!(human_duration(0), "0 ns");
        assert_eq!(human_duration(850), "850 ns");
        assert_eq!(human_duration(12_345), "12.3 µs");
        assert_eq!(human_duration(1_500_000), "1.50 ms");
        assert_eq!(human_duration(412_000_000), "412 ms");
        assert_eq!(human_duration(999_960_000), "1000 ms");
        assert_eq!(human_duration(1_520_000_000), "1.52 s");
        assert_eq!(human_duration(125_000_000_000), "2m05s");
        assert_eq!(human_duration(7_380_000_000_000), "2h03m");
    }

    #[test]
    fn counts_stay_short() {
        assert_eq!(human_count(56), "56");
        assert_eq!(human_count(9_999), "9999");
        assert_eq!(human_count(12_345), "12.3k");
        assert_eq!(human_count(4_500_000), "4.5M");
    }

    #[test]
    fn truncation_marks_the_cut_and_flattens_newlines() {
        assert_eq!(truncate("abcdef", 6), "abcdef");
        assert_eq!(truncate("abcdefg", 6), "abcde…");
        assert_eq!(truncate("a\nb", 6), "a b");
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate("abc", 0), "");
    }

    #[test]
    fn paint_only_with_colour() {
        let mut s = String::new();
        push_painted(&mut s, "x", Some(Paint::Red), false);
        push_painted(&mut s, "y", Some(Paint::Red), true);
        assert_eq!(s, "x\x1b[31my\x1b[0m");
    }
}
