//! idem-client: the client SDK (work in progress).
