//! The time controls: whether the world plays and how fast. Virtual time itself belongs to the
//! world; this only decides how much of it each animation tick asks for.

use std::rc::Rc;

use yew::Reducible;

/// Speeds on offer, in virtual milliseconds per wall-clock millisecond, slow motion first.
/// The `speed` select's option values are these numbers as written here.
pub const SPEEDS: [(&str, f64); 10] = [
    ("0.05", 0.05),
    ("0.1", 0.1),
    ("0.25", 0.25),
    ("0.5", 0.5),
    ("1", 1.0),
    ("2", 2.0),
    ("5", 5.0),
    ("20", 20.0),
    ("100", 100.0),
    ("500", 500.0),
];

/// Index of real time (1×) in [`SPEEDS`].
pub const REAL_TIME: usize = 4;

/// Longest wall-clock gap one tick accounts for; a backgrounded tab does not jump ahead.
pub const MAX_TICK_WALL_MS: f64 = 100.0;

/// Play state and speed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// The world advances on every tick.
    pub playing: bool,
    /// Index into [`SPEEDS`].
    pub speed: usize,
}

impl Default for Clock {
    fn default() -> Self {
        Self {
            playing: true,
            speed: REAL_TIME,
        }
    }
}

impl Clock {
    /// Virtual milliseconds per wall-clock millisecond.
    pub fn factor(&self) -> f64 {
        SPEEDS[self.speed].1
    }

    /// Virtual time to ask the world for after `wall_ms` of real time.
    pub fn virtual_step(&self, wall_ms: f64) -> u64 {
        let wall = wall_ms.clamp(0.0, MAX_TICK_WALL_MS);
        (wall * self.factor()).round() as u64
    }
}

/// What the time controls can do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClockAction {
    /// Start advancing.
    Play,
    /// Stop advancing (step still works).
    Pause,
    /// Choose the speed whose select value is given; unknown values are ignored.
    Speed(&'static str),
}

impl Reducible for Clock {
    type Action = ClockAction;

    fn reduce(self: Rc<Self>, action: ClockAction) -> Rc<Self> {
        let mut next = *self;
        match action {
            ClockAction::Play => next.playing = true,
            ClockAction::Pause => next.playing = false,
            ClockAction::Speed(v) => {
                if let Some(i) = SPEEDS.iter().position(|(s, _)| *s == v) {
                    next.speed = i;
                }
            }
        }
        if next == *self {
            self
        } else {
            Rc::new(next)
        }
    }
}

/// The [`SPEEDS`] entry whose value is `v`, as a `'static` string.
pub fn speed_value(v: &str) -> Option<&'static str> {
    SPEEDS.iter().find(|(s, _)| *s == v).map(|(s, _)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_play_and_speed() {
        let c = Rc::new(Clock::default());
        let c = c.reduce(ClockAction::Pause);
        assert!(!c.playing);
        let c = c.reduce(ClockAction::Speed("500"));
        assert_eq!(c.factor(), 500.0);
        let c = c.reduce(ClockAction::Speed("7"));
        assert_eq!(c.factor(), 500.0, "unknown speeds are ignored");
        assert_eq!(c.speed, SPEEDS.len() - 1);
    }

    #[test]
    fn a_tick_is_capped_so_a_background_tab_does_not_jump() {
        let c = Clock {
            playing: true,
            speed: REAL_TIME,
        };
        assert_eq!(c.virtual_step(16.0), 16);
        assert_eq!(c.virtual_step(5_000.0), 100);
        assert_eq!(c.virtual_step(-3.0), 0);
        let slow = Clock {
            playing: true,
            speed: 0,
        };
        assert_eq!(slow.virtual_step(100.0), 5);
    }

    #[test]
    fn speeds_are_increasing() {
        assert!(SPEEDS.windows(2).all(|w| w[0].1 < w[1].1));
        assert_eq!(speed_value("100"), Some("100"));
        assert_eq!(speed_value("x"), None);
    }
}
