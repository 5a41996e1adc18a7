//! The real driver: runs an [`Operation`](crate::Operation) over `fetch` (implemented in a following commit).
