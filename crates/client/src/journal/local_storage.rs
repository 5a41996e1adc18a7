//! The browser journal: `window.localStorage` (implemented in a following commit).
