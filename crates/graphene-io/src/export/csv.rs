//! `task,stage,priority,start,end,machine`, one row per task in precedence order.

use super::levels::Priorities;
use super::schedule::ScheduleIn;
use crate::error::{Error, Result};

pub fn write(schedule: &ScheduleIn, order: &[usize], pri: &Priorities) -> Result<Vec<u8>> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let err = |e: ::csv::Error| Error::Usage(format!("cannot write CSV: {e}"));
    w.write_record(["task", "stage", "priority", "start", "end", "machine"]).map_err(err)?;
    for &i in order {
        let t = &schedule.tasks[i];
        w.write_record([
            t.id.clone(),
            t.stage_name().to_string(),
            pri.task[i].to_string(),
            t.start.to_string(),
            t.end.to_string(),
            t.machine.to_string(),
        ])
        .map_err(err)?;
    }
    w.into_inner().map_err(|e| Error::Usage(format!("cannot write CSV: {e}")))
}
