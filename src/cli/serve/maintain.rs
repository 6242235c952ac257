//! `/v1/expire` and `/v1/compact`: done by the committer while lookups
//! go on, off the connection's thread. It knows the query's `older-than`;
//! not how the store merges.

use std::sync::Arc;
use std::time::Duration;

use hyper::StatusCode;
use serde_json::json;

use super::Server;
use super::lines::Failed;
use super::routes::{Answered, json_answer, text};

impl Server {
    /// `/v1/expire?older-than=DURATION` (with `expire`) and `/v1/compact`:
    /// done by the committer while lookups go on; the figures as JSON.
    pub(super) async fn maintain(
        self: &Arc<Server>,
        query: Option<&str>,
        expire: bool,
    ) -> Answered {
        let older_than = match expire {
            true => match older_than(query) {
                Ok(age) => Some(age),
                Err(why) => return text(StatusCode::BAD_REQUEST, format!("{why}\n")),
            },
            false => None,
        };
        let server = Arc::clone(self);
        let done = self
            .off_thread(move || match older_than {
                Some(age) => server.service.expire(age),
                None => server.service.compact(),
            })
            .await;
        let committed = match done {
            Ok(Ok(committed)) => committed,
            Ok(Err(refused)) => return Failed::Refused(refused).response(),
            Err(response) => return response,
        };
        let mut body = json!({"keys": committed.keys, "runs": committed.runs});
        if expire {
            body["removed"] = json!(committed.forgotten);
        }
        json_answer(&body)
    }
}

/// `/v1/expire`'s `older-than=DURATION` (as `seen expire --older-than`).
fn older_than(query: Option<&str>) -> Result<Duration, String> {
    let value = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("older-than="));
    let Some(value) = value else {
        return Err("/v1/expire needs ?older-than=DURATION (such as 30d)".into());
    };
    urinorm::store::parse_duration(value).map_err(|e| format!("older-than: {e}"))
}
