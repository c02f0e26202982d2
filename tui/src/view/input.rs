//! Keys to actions. What a key means depends on what is on screen (typing a filter, help).

use crate::state::{Action, Dashboard};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

pub fn action(key: KeyEvent, d: &Dashboard) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    if d.editing_filter() {
        return match key.code {
            KeyCode::Enter => Some(Action::FilterConfirm),
            KeyCode::Esc => Some(Action::FilterCancel),
            KeyCode::Backspace => Some(Action::FilterBackspace),
            KeyCode::Char(c) => Some(Action::FilterInput(c)),
            _ => None,
        };
    }
    match key.code {
        // Esc closes the help first, the dashboard after.
        KeyCode::Esc if d.help() => Some(Action::ToggleHelp),
        KeyCode::Char('q') | KeyCode::Esc => Some(Action::Quit),
        KeyCode::Up | KeyCode::Char('k') => Some(Action::SelectPrevious),
        KeyCode::Down | KeyCode::Char('j') => Some(Action::SelectNext),
        KeyCode::Char('s') => Some(Action::CycleSort),
        KeyCode::Char('/') => Some(Action::StartFilter),
        KeyCode::Char('p') => Some(Action::TogglePause),
        KeyCode::Char('?') => Some(Action::ToggleHelp),
        KeyCode::Char('c') => Some(Action::ToggleClients),
        KeyCode::Char('t') => Some(Action::CycleWindow),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_map_to_actions() {
        let d = Dashboard::new("s");
        let cases = [
            (KeyCode::Char('q'), Action::Quit),
            (KeyCode::Esc, Action::Quit),
            (KeyCode::Up, Action::SelectPrevious),
            (KeyCode::Char('k'), Action::SelectPrevious),
            (KeyCode::Down, Action::SelectNext),
            (KeyCode::Char('j'), Action::SelectNext),
            (KeyCode::Char('s'), Action::CycleSort),
            (KeyCode::Char('/'), Action::StartFilter),
            (KeyCode::Char('p'), Action::TogglePause),
            (KeyCode::Char('?'), Action::ToggleHelp),
            (KeyCode::Char('c'), Action::ToggleClients),
            (KeyCode::Char('t'), Action::CycleWindow),
        ];
        for (code, want) in cases {
            assert_eq!(action(press(code), &d), Some(want), "{code:?}");
        }
        assert_eq!(action(press(KeyCode::Char('x')), &d), None);
        assert_eq!(
            action(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL), &d),
            Some(Action::Quit)
        );
    }

    #[test]
    fn while_typing_a_filter_keys_are_text() {
        let mut d = Dashboard::new("s");
        d.handle(Action::StartFilter);
        assert_eq!(
            action(press(KeyCode::Char('q')), &d),
            Some(Action::FilterInput('q'))
        );
        assert_eq!(
            action(press(KeyCode::Enter), &d),
            Some(Action::FilterConfirm)
        );
        assert_eq!(action(press(KeyCode::Esc), &d), Some(Action::FilterCancel));
        assert_eq!(
            action(press(KeyCode::Backspace), &d),
            Some(Action::FilterBackspace)
        );
    }

    #[test]
    fn esc_closes_the_help_before_it_quits() {
        let mut d = Dashboard::new("s");
        d.handle(Action::ToggleHelp);
        assert_eq!(action(press(KeyCode::Esc), &d), Some(Action::ToggleHelp));
        assert_eq!(action(press(KeyCode::Char('q')), &d), Some(Action::Quit));
    }
}
