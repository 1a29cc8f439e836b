//! An upstream tool's effects and risk: its annotations can only tighten them.
//!
//! Absent hints mean the strictest reading: not read-only, destructive, not idempotent, open
//! world, risk `external`. A hint that loosens (`readOnlyHint: true`, `destructiveHint:
//! false`, `idempotentHint: true`, `openWorldHint: false`) is taken only where the operator's
//! `trust` vouches for it; a hint that tightens is always taken.

use rmcp::model::ToolAnnotations;
use toolgate_config::upstreams::{TrustConfig, UpstreamConfig};
use toolgate_core::{Effects, Risk};

/// The effects and risk of a tool with `annotations`, under `upstream`'s trust.
pub fn effects(
    annotations: Option<&ToolAnnotations>,
    upstream: &UpstreamConfig,
) -> (Effects, Risk) {
    let hint = |f: fn(&ToolAnnotations) -> Option<bool>| annotations.and_then(f);
    let read_only =
        hint(|a| a.read_only_hint) == Some(true) && upstream.trusts(TrustConfig::ReadOnly);
    let trusted_not_destructive =
        hint(|a| a.destructive_hint) == Some(false) && upstream.trusts(TrustConfig::NotDestructive);
    let destructive = !(read_only || trusted_not_destructive);
    let idempotent = read_only
        || (hint(|a| a.idempotent_hint) == Some(true) && upstream.trusts(TrustConfig::Idempotent));
    let open_world =
        !(hint(|a| a.open_world_hint) == Some(false) && upstream.trusts(TrustConfig::ClosedWorld));
    let risk = match (open_world, read_only) {
        (true, _) => Risk::External,
        (false, true) => Risk::Read,
        (false, false) => Risk::Write,
    };
    (
        Effects {
            read_only,
            destructive,
            idempotent,
            open_world,
            concurrency_safe: read_only,
        },
        risk,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn upstream(trust: &[TrustConfig]) -> UpstreamConfig {
        let mut u: UpstreamConfig =
            serde_json::from_value(serde_json::json!({"name": "u", "command": "x"})).unwrap();
        u.trust = trust.to_vec();
        u
    }

    fn hints(
        ro: Option<bool>,
        de: Option<bool>,
        id: Option<bool>,
        ow: Option<bool>,
    ) -> ToolAnnotations {
        let mut a = ToolAnnotations::default();
        a.read_only_hint = ro;
        a.destructive_hint = de;
        a.idempotent_hint = id;
        a.open_world_hint = ow;
        a
    }

    #[test]
    fn absent_hints_are_the_strictest() {
        let (e, r) = effects(None, &upstream(&[]));
        assert_eq!(
            e,
            Effects {
                open_world: true,
                ..Effects::side_effecting()
            }
        );
        assert_eq!(r, Risk::External);
    }

    #[test]
    fn loosening_hints_count_only_where_trusted() {
        let all = hints(Some(true), Some(false), Some(true), Some(false));
        let (e, r) = effects(Some(&all), &upstream(&[]));
        assert_eq!(
            (e.read_only, e.destructive, e.idempotent, e.open_world),
            (false, true, false, true)
        );
        assert_eq!(r, Risk::External);
        let (e, r) = effects(
            Some(&all),
            &upstream(&[TrustConfig::ReadOnly, TrustConfig::ClosedWorld]),
        );
        assert_eq!(e, Effects::read_only());
        assert_eq!(r, Risk::Read);
        let writer = hints(Some(false), Some(false), Some(true), Some(false));
        let (e, r) = effects(
            Some(&writer),
            &upstream(&[
                TrustConfig::NotDestructive,
                TrustConfig::Idempotent,
                TrustConfig::ClosedWorld,
                TrustConfig::ReadOnly,
            ]),
        );
        assert_eq!(
            (e.read_only, e.destructive, e.idempotent, e.open_world),
            (false, false, true, false)
        );
        assert_eq!(r, Risk::Write);
    }

    #[test]
    fn a_write_tool_claiming_read_only_is_not_believed_without_trust() {
        // gateway-poisoned-desc-67's third count: the claim alone changes nothing
        let claim = hints(Some(true), None, None, None);
        let (e, _) = effects(Some(&claim), &upstream(&[TrustConfig::Idempotent]));
        assert!(!e.read_only && e.destructive);
    }
}
