//! The router in front of the replicas: which replica's queue a request joins
//! (or the one shared queue), and joins into batches already in service.

use super::Simulation;
use super::replica::{Policy, Service};
use super::request::{Phase, ReqId};
use crate::scenario::Router;

impl Simulation {
    /// Send a self-hosted request to a replica's queue (or the shared one).
    pub(super) fn route(&mut self, id: ReqId) {
        if self.cfg.router == Router::CentralQueue {
            if self.try_join_in_progress(id, None) {
                return;
            }
            if self.st.queues[0].len() as u64 >= self.cfg.max_queue {
                self.reject(id);
                return;
            }
            self.st.queues[0].push_back(id);
            self.st.waiting += 1;
            for r in 0..self.st.replicas.len() {
                if !self.st.replicas[r].busy {
                    self.try_start(r);
                }
                if self.st.queues[0].is_empty() {
                    break;
                }
            }
            return;
        }
        let r = self.pick_replica();
        let ri = r as usize;
        self.st.requests[id].replica = Some(r);
        if self.try_join_in_progress(id, Some(ri)) {
            return;
        }
        if self.st.queues[ri].len() as u64 >= self.cfg.max_queue {
            self.reject(id);
            return;
        }
        self.st.replicas[ri].outstanding += 1;
        self.st.queues[ri].push_back(id);
        self.st.waiting += 1;
        if !self.st.replicas[ri].busy {
            self.try_start(ri);
        }
    }

    /// The replica a per-replica router chooses; ties go to the lowest index.
    fn pick_replica(&mut self) -> u32 {
        let n = self.st.replicas.len() as u32;
        let reps = &self.st.replicas;
        match self.cfg.router {
            Router::RoundRobin => {
                let r = self.st.rr_next;
                self.st.rr_next = (r + 1) % n;
                r
            }
            Router::LeastOutstanding => (0..n)
                .min_by_key(|&r| (reps[r as usize].outstanding, r))
                .unwrap_or(0),
            Router::JoinShortestQueue => (0..n)
                .min_by_key(|&r| {
                    (
                        self.st.queues[r as usize].len(),
                        reps[r as usize].outstanding,
                        r,
                    )
                })
                .unwrap_or(0),
            Router::CentralQueue => 0,
        }
    }

    /// Abstract bulk service with join-in-progress: an arrival enters a batch in
    /// service if it has room.
    fn try_join_in_progress(&mut self, id: ReqId, only: Option<usize>) -> bool {
        let Service::Abstract {
            join_in_progress: true,
            ..
        } = self.cfg.service
        else {
            return false;
        };
        let Policy::Static { max_batch, .. } = self.cfg.policy else {
            return false;
        };
        let candidates = match only {
            Some(r) => r..r + 1,
            None => 0..self.st.replicas.len(),
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
                return true;
            }
        }
        false
    }

    /// The queue a replica takes from.
    pub(super) fn queue_of(&self, replica: usize) -> usize {
        if self.cfg.router == Router::CentralQueue {
            0
        } else {
            replica
        }
    }
}
