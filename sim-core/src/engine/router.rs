//! The router in front of the replicas: which replica's queue a request joins
//! (or the one shared queue), and joins into batches already in service.

use super::Simulation;
use super::policy::{Policy, Service};
use super::replica::Up;
use super::request::{Phase, ReqId};
use crate::scenario::Router;

impl Simulation {
    /// Send a self-hosted request to a replica's queue (or the shared one).
    pub(super) fn route(&mut self, id: ReqId) {
        let p = usize::from(self.st.requests[id].pool);
        let pool = &self.cfg.pools[p];
        if pool.router == Router::CentralQueue {
            let (q, replicas, max_queue) = (pool.first, pool.range(), pool.max_queue);
            if self.try_join_in_progress(id, replicas.clone()) {
                return;
            }
            if self.st.queues[q].len() as u64 >= max_queue {
                self.reject(id);
                return;
            }
            let level = self.level(id);
            self.st.queues[q].push_back(level, id);
            self.st.waiting += 1;
            for r in replicas {
                if !self.st.replicas[r].busy {
                    self.try_start(r);
                }
                if self.st.queues[q].is_empty() {
                    break;
                }
            }
            return;
        }
        let max_queue = pool.max_queue;
        if pool.scale.is_some() && self.st.scaling[p].serving == 0 {
            // Scaled to zero, or every replica still starting.
            self.hold(p, id);
            return;
        }
        let r = self.pick_replica(id, p);
        let ri = r as usize;
        self.st.requests[id].replica = Some(r);
        if self.try_join_in_progress(id, ri..ri + 1) {
            return;
        }
        if self.st.queues[ri].len() as u64 >= max_queue {
            self.reject(id);
            return;
        }
        self.st.replicas[ri].outstanding += 1;
        let level = self.level(id);
        self.st.queues[ri].push_back(level, id);
        self.st.waiting += 1;
        self.touch(ri);
        if !self.st.replicas[ri].busy {
            self.try_start(ri);
        }
    }

    /// The replica of pool `p` a per-replica router chooses (a fleet
    /// index); ties go to the lowest index. O(1) from the index that
    /// [`Self::touch`] keeps up to date.
    pub(super) fn pick_replica(&mut self, id: ReqId, p: usize) -> u32 {
        let pool = &self.cfg.pools[p];
        let (first, n) = (pool.first as u32, pool.replicas as u32);
        match pool.router {
            Router::CacheAware => first + self.cache_aware(id, p),
            Router::RoundRobin => {
                // The next replica serving (every one, in a fixed pool).
                let mut r = self.st.rr_next[p];
                for _ in 0..n {
                    if self.st.replicas[(first + r) as usize].up == Up::Serving {
                        break;
                    }
                    r = (r + 1) % n;
                }
                self.st.rr_next[p] = (r + 1) % n;
                first + r
            }
            Router::LeastOutstanding | Router::JoinShortestQueue => {
                let best = self.st.index[p].min();
                debug_assert_eq!(
                    Some(best),
                    (0..n).min_by_key(|&r| self.route_key(first as usize + r as usize)),
                    "the router's index is stale"
                );
                first + best
            }
            Router::CentralQueue => first,
        }
    }

    /// [`Router::CacheAware`]'s choice in pool `p` for request `id` (an
    /// index within the pool): O(replicas × the prompt's cached blocks).
    fn cache_aware(&self, id: ReqId, p: usize) -> u32 {
        /// Least share of the prompt cached to follow the cache, and the
        /// imbalance (absolute, relative) past which load decides alone:
        /// vLLM router's and SGLang gateway's defaults.
        const CACHE_THRESHOLD: f64 = 0.3;
        const BALANCE_ABS: u64 = 64;
        const BALANCE_REL: f64 = 1.5;
        let pool = &self.cfg.pools[p];
        let least = self.st.index[p].min();
        let reps = &self.st.replicas[pool.range()];
        // The index orders replicas by outstanding requests first.
        let lo = reps[least as usize].outstanding;
        let hi = reps.iter().map(|r| r.outstanding).max().unwrap_or(lo);
        if !pool.prefix_caching
            || !self.shares_prefix(id)
            || (hi - lo > BALANCE_ABS && hi as f64 > BALANCE_REL * lo as f64)
        {
            return least;
        }
        let identity = self.identity(id);
        // Most cached blocks; ties to the less loaded, then the lower index.
        let (best, hits) = (0..reps.len())
            .filter(|&r| reps[r].up == Up::Serving)
            .map(|r| {
                let (hits, _) = reps[r].cache.probe(&identity, &self.st.prefix_hashes);
                (r as u32, hits)
            })
            .max_by_key(|&(r, hits)| {
                (
                    hits,
                    std::cmp::Reverse(reps[r as usize].outstanding),
                    std::cmp::Reverse(r),
                )
            })
            .unwrap_or((least, 0));
        let prompt = f64::from(self.st.requests[id].input_tokens.max(1));
        if hits > 0 && (f64::from(hits) * super::BLOCK as f64) >= CACHE_THRESHOLD * prompt {
            best
        } else {
            least
        }
    }

    /// What the router minimises for replica `r`: (requests waiting or running)
    /// for least-outstanding, (waiting, then waiting or running) for
    /// join-shortest-queue; the index breaks ties.
    fn route_key(&self, r: usize) -> RouteKey {
        let pool = &pool!(self, r);
        let out = self.st.replicas[r].outstanding;
        // Ranked within the pool, by the replica's index there.
        let i = (r - pool.first) as u32;
        if self.st.replicas[r].up != Up::Serving {
            return (u64::MAX, u64::MAX, i);
        }
        match pool.router {
            Router::JoinShortestQueue => (self.st.queues[r].len() as u64, out, i),
            _ => (out, 0, i),
        }
    }

    /// Replica `r`'s queue or outstanding count changed: refresh its place in
    /// the router's index (O(log replicas)).
    pub(super) fn touch(&mut self, r: usize) {
        let pool = &pool!(self, r);
        if matches!(
            pool.router,
            Router::LeastOutstanding | Router::JoinShortestQueue | Router::CacheAware
        ) {
            let (p, first) = (self.st.replicas[r].pool, pool.first);
            let key = self.route_key(r);
            self.st.index[usize::from(p)].set(r - first, key);
        }
    }

    /// Abstract bulk service with join-in-progress: an arrival enters a batch in
    /// service if it has room.
    fn try_join_in_progress(&mut self, id: ReqId, candidates: std::ops::Range<usize>) -> bool {
        let pool = &self.cfg.pools[usize::from(self.st.requests[id].pool)];
        let Service::Abstract {
            join_in_progress: true,
            ..
        } = pool.service
        else {
            return false;
        };
        let Policy::Static { max_batch, .. } = pool.policy else {
            return false;
        };
        for r in candidates {
            let rep = &self.st.replicas[r];
            if rep.busy
                && self.st.finishing != Some(r)
                && (rep.abstract_members.len() as u64) < max_batch
            {
                let req = &mut self.st.requests[id];
                req.replica = Some(r as u32);
                req.admitted_ns = self.st.now;
                req.phase = Phase::Batched;
                let rep = &mut self.st.replicas[r];
                rep.abstract_members.push(id);
                rep.outstanding += 1;
                rep.running += 1;
                self.touch(r);
                return true;
            }
        }
        false
    }

    /// The queue a replica takes from.
    pub(super) fn queue_of(&self, replica: usize) -> usize {
        let pool = &pool!(self, replica);
        if pool.router == Router::CentralQueue {
            pool.first
        } else {
            replica
        }
    }
}

/// A router's sort key for one replica.
pub(super) type RouteKey = (u64, u64, u32);

/// A tournament tree over the replicas' route keys: the least in O(1), an
/// update in O(log replicas).
#[derive(Clone, Debug, Default)]
pub(super) struct ReplicaIndex {
    leaves: usize,
    nodes: Vec<RouteKey>,
}

impl ReplicaIndex {
    /// An index of `n` replicas, all idle.
    pub(super) fn new(n: usize) -> Self {
        let leaves = n.next_power_of_two().max(1);
        let mut nodes = vec![(u64::MAX, u64::MAX, u32::MAX); 2 * leaves];
        for r in 0..n {
            nodes[leaves + r] = (0, 0, r as u32);
        }
        for i in (1..leaves).rev() {
            nodes[i] = nodes[2 * i].min(nodes[2 * i + 1]);
        }
        ReplicaIndex { leaves, nodes }
    }

    /// Set replica `r`'s key.
    pub(super) fn set(&mut self, r: usize, key: RouteKey) {
        let mut i = self.leaves + r;
        self.nodes[i] = key;
        while i > 1 {
            i /= 2;
            self.nodes[i] = self.nodes[2 * i].min(self.nodes[2 * i + 1]);
        }
    }

    /// The replica with the least key.
    pub(super) fn min(&self) -> u32 {
        self.nodes.get(1).map_or(0, |k| k.2)
    }
}
