//! Classroom controls: which central tab is open, the help overlay, projector mode, and what
//! each key does. Plain data, unit-tested natively; the listener lives in
//! `components/keyboard.rs`.

use std::rc::Rc;

use yew::Reducible;

/// A key's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyAction {
    /// Space: play or pause.
    TogglePlay,
    /// `.`: run the next event (presenter clickers send it).
    Step,
    /// `←`: one event back through the recorded history.
    Back,
    /// `→`: one event forward through the recorded history.
    Forward,
    /// `1`–`9`: the scenario at this index (0-based).
    Scenario(usize),
    /// `?`: show or hide the help overlay.
    ToggleHelp,
    /// `Escape`: close the help overlay.
    CloseHelp,
    /// `p`: projector mode on or off.
    ToggleProjector,
    /// `t`: open the guided tour (or close it).
    ToggleTour,
    /// `n` or PageDown: the tour's next step.
    TourNext,
    /// `b` or PageUp: the tour's previous step.
    TourBack,
}

/// What `key` (a `KeyboardEvent.key`) does, or `None`. Nothing fires while the user types in a
/// field (`typing`) or holds Ctrl, Alt or Meta (browser shortcuts stay the browser's).
pub fn key_action(key: &str, typing: bool, modifier: bool) -> Option<KeyAction> {
    if typing || modifier {
        return None;
    }
    Some(match key {
        " " | "Spacebar" => KeyAction::TogglePlay,
        "." => KeyAction::Step,
        "ArrowLeft" => KeyAction::Back,
        "ArrowRight" => KeyAction::Forward,
        "?" => KeyAction::ToggleHelp,
        "Escape" => KeyAction::CloseHelp,
        "p" | "P" => KeyAction::ToggleProjector,
        "t" | "T" => KeyAction::ToggleTour,
        "n" | "N" | "PageDown" => KeyAction::TourNext,
        "b" | "B" | "PageUp" => KeyAction::TourBack,
        d if d.len() == 1 && ("1"..="9").contains(&d) => {
            KeyAction::Scenario(usize::from(d.as_bytes()[0] - b'1'))
        }
        _ => return None,
    })
}

/// Whether an element with this tag name (and `contenteditable`) takes typed text.
pub fn is_typing_target(tag: &str, editable: bool) -> bool {
    editable || matches!(tag, "INPUT" | "TEXTAREA" | "SELECT")
}

/// The central area's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    /// Claim table and event feed.
    Server,
    /// One checkout's messages between browser, network, server and PayCo.
    Sequence,
    /// One lane per checkout.
    Timeline,
    /// The three strategies side by side.
    Lab,
}

impl Tab {
    /// In the tab bar's order.
    pub const ALL: [Tab; 4] = [Tab::Server, Tab::Sequence, Tab::Timeline, Tab::Lab];

    /// The `tab-<name>` hook's name.
    pub fn name(self) -> &'static str {
        match self {
            Tab::Server => "server",
            Tab::Sequence => "sequence",
            Tab::Timeline => "timeline",
            Tab::Lab => "lab",
        }
    }

    /// Its place in the tab bar (what a link keeps).
    pub fn index(self) -> u8 {
        self as u8
    }

    /// The tab at `index` in the tab bar (the first for anything else).
    pub fn at(index: u8) -> Tab {
        Tab::ALL
            .get(usize::from(index))
            .copied()
            .unwrap_or(Tab::Server)
    }

    /// The tab shown while this one is open: real mode has no run to put on a timeline or a
    /// lab, so it shows the server's view instead of those.
    pub fn shown(self, real: bool) -> Tab {
        match self {
            Tab::Timeline | Tab::Lab if real => Tab::Server,
            t => t,
        }
    }

    /// What the tab says.
    pub fn label(self) -> &'static str {
        match self {
            Tab::Server => "Server",
            Tab::Sequence => "Sequence",
            Tab::Timeline => "Timeline",
            Tab::Lab => "Lab",
        }
    }
}

/// Tab, overlay and projector state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ui {
    /// The open tab.
    pub tab: Tab,
    /// The help overlay is open.
    pub help: bool,
    /// Larger type, high contrast, fewer panels.
    pub projector: bool,
    /// The lab runs the lesson preset's faults instead of the page's settings.
    pub lab_lesson: bool,
    /// The guided tour's step (0-based), while the tour is open.
    pub tour: Option<usize>,
    /// Bumped when the reader moves through the tour (the page then runs the step).
    pub tour_rev: u32,
}

impl Ui {
    /// The page at start (`projector` from the link).
    pub fn new(projector: bool) -> Ui {
        Ui {
            tab: Tab::Server,
            help: false,
            projector,
            lab_lesson: false,
            tour: None,
            tour_rev: 0,
        }
    }
}

/// What changes the classroom controls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiAction {
    /// Open a tab.
    Open(Tab),
    /// Show or hide help.
    ToggleHelp,
    /// Hide help.
    CloseHelp,
    /// Projector mode on or off.
    ToggleProjector,
    /// The lab uses the lesson preset's faults (or the page's settings again).
    LabLesson(bool),
    /// Open the tour at `step` and run it: its tab opens, and a step without a scenario (the
    /// lab) uses the lesson's faults (`model::tour::go` builds it from the step).
    TourGo {
        /// 0-based.
        step: usize,
        /// The tab the step shows.
        tab: Tab,
        /// The lab uses the lesson preset.
        lesson: bool,
        /// Run the step (a reader moved); without, only show it (a link opened at its moment).
        run: bool,
    },
    /// Close the tour.
    TourClose,
}

impl Reducible for Ui {
    type Action = UiAction;

    fn reduce(self: Rc<Self>, action: UiAction) -> Rc<Self> {
        let mut next = *self;
        match action {
            UiAction::Open(tab) => next.tab = tab,
            UiAction::ToggleHelp => next.help = !next.help,
            UiAction::CloseHelp => next.help = false,
            UiAction::ToggleProjector => next.projector = !next.projector,
            UiAction::LabLesson(on) => next.lab_lesson = on,
            UiAction::TourGo {
                step,
                tab,
                lesson,
                run,
            } => {
                next.tour = Some(step);
                next.tour_rev += u32::from(run);
                next.tab = tab;
                next.lab_lesson |= lesson;
                next.help = false;
            }
            UiAction::TourClose => next.tour = None,
        }
        if next == *self {
            self
        } else {
            Rc::new(next)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_actions() {
        assert_eq!(key_action(" ", false, false), Some(KeyAction::TogglePlay));
        assert_eq!(key_action(".", false, false), Some(KeyAction::Step));
        assert_eq!(key_action("ArrowLeft", false, false), Some(KeyAction::Back));
        assert_eq!(
            key_action("ArrowRight", false, false),
            Some(KeyAction::Forward)
        );
        assert_eq!(key_action("?", false, false), Some(KeyAction::ToggleHelp));
        assert_eq!(
            key_action("Escape", false, false),
            Some(KeyAction::CloseHelp)
        );
        assert_eq!(
            key_action("p", false, false),
            Some(KeyAction::ToggleProjector)
        );
        assert_eq!(key_action("1", false, false), Some(KeyAction::Scenario(0)));
        assert_eq!(key_action("9", false, false), Some(KeyAction::Scenario(8)));
        assert_eq!(key_action("t", false, false), Some(KeyAction::ToggleTour));
        assert_eq!(
            key_action("PageDown", false, false),
            Some(KeyAction::TourNext)
        );
        assert_eq!(key_action("b", false, false), Some(KeyAction::TourBack));
        for none in ["0", "a", "Enter", "12", "", "ArrowUp"] {
            assert_eq!(key_action(none, false, false), None, "{none:?}");
        }
    }

    #[test]
    fn nothing_fires_while_typing_or_with_a_modifier() {
        for key in [" ", ".", "ArrowLeft", "?", "p", "3"] {
            assert_eq!(key_action(key, true, false), None);
            assert_eq!(key_action(key, false, true), None);
        }
        assert!(is_typing_target("INPUT", false));
        assert!(is_typing_target("SELECT", false));
        assert!(is_typing_target("TEXTAREA", false));
        assert!(is_typing_target("DIV", true));
        assert!(!is_typing_target("BUTTON", false));
        assert!(!is_typing_target("BODY", false));
    }

    #[test]
    fn the_ui_reducer_toggles() {
        let ui = Rc::new(Ui::new(false));
        let ui = ui.reduce(UiAction::ToggleHelp);
        assert!(ui.help);
        let ui = ui.reduce(UiAction::CloseHelp);
        assert!(!ui.help);
        let ui = ui.reduce(UiAction::ToggleProjector);
        assert!(ui.projector);
        let ui = ui.reduce(UiAction::Open(Tab::Lab));
        assert_eq!(ui.tab, Tab::Lab);
        let same = ui.clone().reduce(UiAction::Open(Tab::Lab));
        assert!(Rc::ptr_eq(&ui, &same), "no change, no re-render");
    }

    #[test]
    fn a_tabs_place_in_the_bar_round_trips() {
        for (i, t) in Tab::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(t.index()), i);
            assert_eq!(Tab::at(t.index()), t);
        }
        assert_eq!(Tab::at(9), Tab::Server);
    }
}
