//! [`Caller`]: who a keyed request acts as ([`Principal`]), the capability
//! it calls, and its [`Call`] in progress (the credit it holds and what it
//! was charged). Made by [`crate::guard`]; handlers take it as an
//! extractor.

use std::{
    ops::Deref,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use axum::{extract::FromRequestParts, http::request::Parts};
use onceq_store::{QueueRef, StoreError};
use onceq_types::{
    ErrorCode,
    account::micros_to_usd,
    capability::{CapabilityDef, Unit},
};
use serde::Serialize;

use crate::{
    ApiError, AppState,
    accounts::{
        Accounts,
        ledger::{Counts, OverLimit},
    },
    clock::Clock,
    envelope::Reply,
    idempotency::Needs,
    payloads::PayloadGate,
    principal::Principal,
};

/// The key a keyed request was made with, as checked by the guard, and the
/// capability it calls. Derefs to its [`Principal`] (project, key id,
/// scope).
#[derive(Debug, Clone)]
pub struct Caller {
    principal: Principal,
    /// The call in progress (credit and metering).
    pub(crate) call: Arc<Call>,
}

impl Deref for Caller {
    type Target = Principal;

    fn deref(&self) -> &Principal {
        &self.principal
    }
}

impl Caller {
    /// The queue `name` of the caller's project, if the key's queue
    /// patterns allow it; 403 `FORBIDDEN` otherwise.
    /// Noted as one of the call's [`Needs`]: a replay of its answer
    /// checks the replaying key against the same queue.
    pub fn queue(&self, name: &str) -> Result<QueueRef, ApiError> {
        let queue = self.queue_ref(name).ok_or_else(|| {
            ApiError::forbidden(format!(
                "this API key may not use queue {name:?} (its queues: {})",
                self.scope.queues
            ))
        })?;
        self.call.note(|n| {
            n.queues.insert(name.to_owned());
        });
        Ok(queue)
    }

    /// The key's [`PayloadGate`] (shadowing [`Principal::payloads`] so that
    /// an answer shaped with payloads notes it: its replay needs `peek`).
    pub fn payloads(&self) -> PayloadGate {
        let gate = self.principal.payloads();
        if !gate.withheld() {
            self.call.note(|n| n.payloads = true);
        }
        gate
    }

    /// Notes that the call needed queue patterns `*` (checked by the
    /// handler): its replay needs them too.
    pub fn needed_every_queue(&self) {
        self.call.note(|n| n.every_queue = true);
    }

    /// What the call's handler checked and passed so far.
    pub(crate) fn needs(&self) -> Needs {
        self.call
            .needs
            .lock()
            .map(|n| n.clone())
            .unwrap_or_default()
    }

    /// The capability called.
    pub fn capability(&self) -> &'static CapabilityDef {
        self.call.capability
    }

    /// Holds `micros` of the project's credit for this call: 402
    /// `INSUFFICIENT_CREDIT` if the project cannot afford it. Released when
    /// the call ends; what it really cost is [`Caller::charge`]d.
    pub fn reserve(&self, micros: u64) -> Result<(), ApiError> {
        self.call.reserve(micros)
    }

    /// Records what this call cost (micro-USD), once the store did the work.
    pub fn charge(&self, micros: u64) {
        self.call.charge(micros);
    }

    /// A successful answer reporting the capability's per-call price as
    /// its `cost_usd` (a handler priced per message sets its own).
    pub fn reply<T: Serialize>(&self, data: T) -> Reply<T> {
        Reply::new(data).cost(micros_to_usd(self.call.per_call))
    }
}

/// Handlers get the [`Caller`] the guard put in the request; a route
/// without a guard has none, which is a bug (500), never an open door.
impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts.extensions.get::<Caller>().cloned().ok_or_else(|| {
            ApiError::from_store(StoreError::internal("route has no auth guard"), "")
        })
    }
}

/// A call in progress: what it holds and what it was charged. Settles when
/// dropped (see [`crate::guard`]).
#[derive(Debug)]
pub struct Call {
    accounts: Arc<Accounts>,
    clock: Clock,
    pub(crate) project: String,
    capability: &'static CapabilityDef,
    /// The capability's price per call (0 for one priced per message).
    pub(crate) per_call: u64,
    reserved: AtomicU64,
    charged: AtomicU64,
    succeeded: AtomicBool,
    /// Answered from the call ledger: counted, never charged.
    replayed: AtomicBool,
    /// The checks the handler passed (`crate::idempotency::needs`).
    needs: Mutex<Needs>,
}

impl Caller {
    /// The caller `principal` calling `capability`; nothing reserved yet.
    pub(crate) fn new(
        state: &AppState,
        principal: Principal,
        capability: &'static CapabilityDef,
    ) -> Self {
        let per_call = match capability.unit {
            Unit::Call => state.config.prices.micros(capability),
            Unit::Message => 0,
        };
        let call = Arc::new(Call {
            accounts: state.accounts.clone(),
            clock: state.clock.clone(),
            project: principal.project.clone(),
            capability,
            per_call,
            reserved: AtomicU64::new(0),
            charged: AtomicU64::new(0),
            succeeded: AtomicBool::new(false),
            replayed: AtomicBool::new(false),
            needs: Mutex::new(Needs::default()),
        });
        Self { principal, call }
    }
}

impl Call {
    pub(crate) fn reserve(&self, micros: u64) -> Result<(), ApiError> {
        self.accounts
            .ledger
            .reserve(&self.project, micros)
            .map_err(|o| insufficient_credit(&self.project, o))?;
        self.reserved.fetch_add(micros, Ordering::Relaxed);
        Ok(())
    }

    fn note(&self, f: impl FnOnce(&mut Needs)) {
        // A poisoned lock only means another note panicked: the needs
        // are still the ones noted.
        let mut needs = self.needs.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut needs);
    }

    pub(crate) fn charge(&self, micros: u64) {
        self.charged.fetch_add(micros, Ordering::Relaxed);
    }

    /// The handler answered 200: the call counts, and is charged its
    /// per-call price (unless it was a replay).
    pub(crate) fn succeed(&self) {
        self.succeeded.store(true, Ordering::Relaxed);
        if !self.replayed.load(Ordering::Relaxed) {
            self.charge(self.per_call);
        }
    }

    /// The call was answered from the call ledger (`crate::idempotency`):
    /// replays are never charged.
    pub(crate) fn replayed(&self) {
        self.replayed.store(true, Ordering::Relaxed);
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let charged = *self.charged.get_mut();
        let ok = *self.succeeded.get_mut() || charged > 0;
        self.accounts.ledger.settle(
            &self.project,
            self.capability.id,
            self.clock.now(),
            *self.reserved.get_mut(),
            Counts {
                calls: u64::from(ok),
                billable_calls: u64::from(charged > 0),
                cost_micros: charged,
            },
        );
    }
}

fn insufficient_credit(project: &str, o: OverLimit) -> ApiError {
    ApiError::new(
        ErrorCode::InsufficientCredit,
        format!(
            "project {project:?} has used its credit ({} of {} USD); nothing was done",
            micros_to_usd(o.spent),
            micros_to_usd(o.limit)
        ),
    )
}
