//! [`Switch`]: the one parser of every on/off setting (`--metrics-public`,
//! `ONCEQ_PUSH_ALLOW_LOOPBACK=1`, ...), so that flags and environment
//! variables spell booleans alike: `1/0`, `true/false`, `yes/no`, `on/off`
//! (any case; clap's [`BoolishValueParser`] also takes `y/n`, `t/f`). A
//! flag alone means true. Declared as
//!
//! ```text
//! #[arg(long, env = "ONCEQ_X", value_parser = Switch, action = ArgAction::Set,
//!       num_args = 0..=1, default_missing_value = "true", default_value = "false")]
//! ```
//!
//! A bad value is refused naming the variable and the flag, with the
//! spellings accepted (clap's own message names neither).

use clap::{
    Arg, Command,
    builder::{BoolishValueParser, TypedValueParser},
    error::ErrorKind,
};

/// See the module doc.
#[derive(Debug, Clone, Copy)]
pub struct Switch;

impl TypedValueParser for Switch {
    type Value = bool;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<bool, clap::Error> {
        BoolishValueParser::new()
            .parse_ref(cmd, arg, value)
            .map_err(|_| {
                let flag = arg.and_then(Arg::get_long).map(|l| format!("--{l}"));
                let env = arg.and_then(Arg::get_env).map(|e| e.to_string_lossy().into_owned());
                let name = match (env, flag) {
                    (Some(env), Some(flag)) => format!("{env} (or {flag})"),
                    (Some(one), None) | (None, Some(one)) => one,
                    (None, None) => "a switch".into(),
                };
                clap::Error::raw(
                    ErrorKind::ValueValidation,
                    format!(
                        "{name}: {:?} is not on or off; write 1/0, true/false, yes/no or on/off (any case)\n",
                        value.to_string_lossy()
                    ),
                )
                .with_cmd(cmd)
            })
    }
}
