//! Cron schedules (`/v1/cron/...`): each run published once into a queue
//! of the key's project (docs/cron.md).

use onceq_types::{
    cron::{CronCreate, CronDeleted, CronJob, CronUpdate},
    reply::Items,
};
use reqwest::Method;

use super::{Answer, Client, Error, id_segment};

/// What [`Client::cron_create`] returned.
#[derive(Debug, Clone)]
pub struct CronCreated {
    /// The schedule (the first one, when `idempotency_key` named it).
    pub job: CronJob,
    /// True when the create's `idempotency_key` named an existing schedule.
    pub replay: bool,
}

impl Client {
    /// Creates a schedule (`POST /v1/cron/create`).
    pub async fn cron_create(&self, req: &CronCreate) -> Result<CronCreated, Error> {
        let a: Answer<CronJob> = self
            .call(Method::POST, "/v1/cron/create", Some(req))
            .await?;
        Ok(CronCreated {
            job: a.data,
            replay: a.replay,
        })
    }

    /// The project's schedules, oldest first (without their runs).
    pub async fn cron_list(&self) -> Result<Vec<CronJob>, Error> {
        let a: Answer<Items<CronJob>> = self
            .call::<(), _>(Method::GET, "/v1/cron/list", None)
            .await?;
        Ok(a.data.items)
    }

    /// One schedule with its recent runs.
    pub async fn cron_get(&self, job_id: &str) -> Result<CronJob, Error> {
        let path = format!("/v1/cron/get/{}", id_segment(job_id)?);
        Ok(self.call::<(), _>(Method::GET, &path, None).await?.data)
    }

    /// Changes the fields `req` names (`POST /v1/cron/update`).
    pub async fn cron_update(&self, req: &CronUpdate) -> Result<CronJob, Error> {
        Ok(self
            .call(Method::POST, "/v1/cron/update", Some(req))
            .await?
            .data)
    }

    /// Pauses a schedule: it does not fire until resumed.
    pub async fn cron_pause(&self, job_id: &str) -> Result<CronJob, Error> {
        let path = format!("/v1/cron/pause/{}", id_segment(job_id)?);
        Ok(self.call::<(), _>(Method::POST, &path, None).await?.data)
    }

    /// Resumes a schedule; the ticks missed while paused are skipped.
    pub async fn cron_resume(&self, job_id: &str) -> Result<CronJob, Error> {
        let path = format!("/v1/cron/resume/{}", id_segment(job_id)?);
        Ok(self.call::<(), _>(Method::POST, &path, None).await?.data)
    }

    /// Deletes a schedule and its runs.
    pub async fn cron_delete(&self, job_id: &str) -> Result<CronDeleted, Error> {
        let path = format!("/v1/cron/delete/{}", id_segment(job_id)?);
        Ok(self.call::<(), _>(Method::DELETE, &path, None).await?.data)
    }
}
