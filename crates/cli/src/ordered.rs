//! Items prepared by two workers, consumed one at a time in the order they
//! were numbered, whichever worker finishes first.
//!
//! A worker that has prepared an item which is not next does not wait: it
//! leaves it here and prepares another, and whoever consumes next takes it in
//! turn. Only when `MAX_READY` items wait does a worker wait to consume.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, TryLockError};

/// Items prepared and not yet consumed, at most: past it a worker waits.
pub const MAX_READY: usize = 4;

/// How a worker that has put an item takes part in consuming.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Consume {
    /// Consume the items that are next, unless another worker is consuming
    /// (it takes them too); then go on preparing instead of waiting.
    IfFree,
    /// Consume the items that are next, once another worker is done.
    Blocking,
    /// As `Blocking`, and wait for the next item to arrive (too many wait).
    UntilNext,
}

struct Ready<T> {
    items: BTreeMap<u64, T>,
    /// Consumed items, handed back for their buffers to be reused.
    spare: Vec<T>,
    /// A worker stopped while holding an item (it panicked): nobody waits for it.
    abandoned: bool,
    /// Workers waiting for an item to arrive: only then is a put worth a wake-up
    /// (a system call each, on every chunk otherwise).
    waiting: usize,
}

/// The consumer's state, and the number of the item it takes next.
struct Consumer<C> {
    state: C,
    next: u64,
}

pub struct Ordered<T, C> {
    consumer: Mutex<Consumer<C>>,
    ready: Mutex<Ready<T>>,
    arrived: Condvar,
}

/// The lock, also after a worker panicked holding it: a panic is told through
/// [`Ordered::abandon`], not through a poisoned lock.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T, C> Ordered<T, C> {
    pub fn new(state: C) -> Self {
        Ordered {
            consumer: Mutex::new(Consumer { state, next: 0 }),
            ready: Mutex::new(Ready {
                items: BTreeMap::new(),
                spare: Vec::new(),
                abandoned: false,
                waiting: 0,
            }),
            arrived: Condvar::new(),
        }
    }

    /// A consumed item to reuse, if any.
    pub fn spare(&self) -> Option<T> {
        lock(&self.ready).spare.pop()
    }

    /// Leaves item `k` to be consumed in turn; how the worker should then
    /// take part ([`Ordered::consume`]).
    pub fn put(&self, k: u64, item: T) -> Consume {
        let (full, waiting) = {
            let mut r = lock(&self.ready);
            r.items.insert(k, item);
            (r.items.len() >= MAX_READY, r.waiting > 0)
        };
        if waiting {
            self.arrived.notify_all();
        }
        if full {
            Consume::UntilNext
        } else {
            Consume::IfFree
        }
    }

    /// Consumes the waiting items that come next, in order; `eat` returns
    /// the item for reuse. False when another worker stopped (it panicked).
    pub fn consume(&self, how: Consume, mut eat: impl FnMut(&mut C, T) -> T) -> bool {
        let mut c = match how {
            Consume::IfFree => match self.consumer.try_lock() {
                Ok(c) => c,
                Err(TryLockError::WouldBlock) => return true,
                Err(TryLockError::Poisoned(e)) => e.into_inner(),
            },
            Consume::Blocking | Consume::UntilNext => lock(&self.consumer),
        };
        let mut wait = how == Consume::UntilNext;
        loop {
            let mut r = lock(&self.ready);
            // While the map is full the next item is still being prepared by
            // another worker (it took it, and puts it here before it stops).
            // Once it is not full, the others may have consumed everything.
            while wait
                && !r.items.contains_key(&c.next)
                && r.items.len() >= MAX_READY
                && !r.abandoned
            {
                r.waiting += 1;
                r = self.arrived.wait(r).unwrap_or_else(|e| e.into_inner());
                r.waiting -= 1;
            }
            wait = false;
            if r.abandoned {
                return false;
            }
            let next = c.next;
            let Some(item) = r.items.remove(&next) else {
                return true;
            };
            drop(r);
            let item = eat(&mut c.state, item);
            c.next += 1;
            lock(&self.ready).spare.push(item);
        }
    }

    /// Marks a worker as stopped while holding an item: no one waits for it.
    pub fn abandon(&self) {
        lock(&self.ready).abandoned = true;
        self.arrived.notify_all();
    }

    pub fn into_state(self) -> C {
        self.consumer
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// Two workers take numbers, "prepare" each for an uneven time (some much
    /// longer, so items pile up past the limit), put them, and consume as the
    /// reader does; the consumer must see every number once, in order, and
    /// the run must end.
    fn run(total: u64, seed: u64) -> Vec<u64> {
        let ordered = Ordered::new(Vec::new());
        let taken = AtomicU64::new(0);
        let worker = |me: u64| {
            let mut rng = batchlens_sim::rng::Rng::new(seed ^ (me + 1));
            loop {
                let k = taken.fetch_add(1, Ordering::SeqCst);
                if k >= total {
                    ordered.consume(Consume::Blocking, |seen: &mut Vec<u64>, v| {
                        seen.push(v);
                        v
                    });
                    return;
                }
                let x = rng.next_u64();
                let micros = if x % 7 == 0 { 3000 } else { x % 200 };
                std::thread::sleep(Duration::from_micros(micros));
                let how = ordered.put(k, k);
                // Now and then a long feed, while the other worker puts several.
                let eat = if x % 5 == 0 { 2000 } else { x % 100 };
                ordered.consume(how, |seen: &mut Vec<u64>, v| {
                    std::thread::sleep(Duration::from_micros(eat));
                    seen.push(v);
                    v
                });
            }
        };
        std::thread::scope(|s| {
            s.spawn(|| worker(1));
            worker(0);
        });
        ordered.into_state()
    }

    #[test]
    fn every_item_is_consumed_once_in_order_and_no_worker_waits_forever() {
        for seed in 0..60 {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let total = 1 + seed % 23;
                tx.send((total, run(total, seed))).ok();
            });
            let (total, seen) = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("seed {seed}: the workers stalled"));
            assert_eq!(seen, (0..total).collect::<Vec<_>>(), "seed {seed}");
        }
    }
}
