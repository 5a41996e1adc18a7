//! Minting idempotency keys (injected, so the simulator can seed them).

use rand_core::RngCore;
use uuid::Uuid;

/// Mints a fresh UUID v4 idempotency key. Called at most once per operation.
///
/// Closures `FnMut() -> Uuid` implement it, so a test can write `&mut || Uuid::nil()`.
pub trait KeyMinter {
    /// A new random version-4 UUID.
    fn mint(&mut self) -> Uuid;
}

impl<F: FnMut() -> Uuid> KeyMinter for F {
    fn mint(&mut self) -> Uuid {
        self()
    }
}

/// Keys from the platform's secure generator: `Uuid::new_v4()` (the OS natively; in the browser,
/// `crypto.getRandomValues` through uuid's `js` feature).
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomKeys;

impl KeyMinter for RandomKeys {
    fn mint(&mut self) -> Uuid {
        Uuid::new_v4()
    }
}

/// Keys drawn from an injected generator through `uuid::Builder::from_random_bytes`: still
/// version 4, and reproducible from the generator's seed (the simulator's choice).
#[derive(Debug)]
pub struct RngKeys<'a, R: RngCore + ?Sized>(pub &'a mut R);

impl<R: RngCore + ?Sized> KeyMinter for RngKeys<'_, R> {
    fn mint(&mut self) -> Uuid {
        let mut bytes = [0u8; 16];
        self.0.fill_bytes(&mut bytes);
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}
