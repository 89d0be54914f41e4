"""Real-shaped knowledge lines: every variant the reference describes, written as
opencode-swarm writes them (byte-exact ``JSON.stringify`` output)."""

from __future__ import annotations

V1 = (
    '{"id":"0b6c8a52-5b0e-4c1e-9a3e-2f1d7c9e8a01","tier":"swarm","lesson":"Files src/a.ts and '
    "src/b.ts co-change with NPMI=0.812 but have no import relationship. This hidden coupling "
    "suggests a shared architectural concern — changes to one likely require changes to the "
    'other.","category":"architecture","tags":["hidden-coupling","co-change","dark-matter"],'
    '"scope":"global","confidence":0.43999999999999995,"status":"candidate","confirmed_by":[],'
    '"retrieval_outcomes":{"applied_count":2,"succeeded_after_count":1,"failed_after_count":0},'
    '"schema_version":1,"created_at":"2026-03-01T10:11:12.345Z","updated_at":'
    '"2026-03-01T10:11:12.345Z","project_name":"trainingapp","auto_generated":true}'
)
V2_ORDER_A = (
    '{"id":"1c2d3e4f-0000-4000-8000-000000000002","tier":"swarm","lesson":"Always run vitest '
    'with --run in CI so the watcher never blocks the pipeline","category":"testing","tags":'
    '["testing","ci-cd"],"scope":"global","confidence":1,"status":"established","confirmed_by":'
    '[{"phase_number":1,"confirmed_at":"2026-03-02T00:00:00.000Z","project_name":"trainingapp"},'
    '{"phase_number":2,"confirmed_at":"2026-03-03T00:00:00.000Z","project_name":"trainingapp"}],'
    '"retrieval_outcomes":{"applied_count":5,"succeeded_after_count":3,"failed_after_count":1,'
    '"shown_count":7,"acknowledged_count":2,"applied_explicit_count":1,"ignored_count":0,'
    '"violated_count":0,"succeeded_after_shown_count":3,"failed_after_shown_count":1,'
    '"contradicted_count":0},"schema_version":1,"created_at":"2026-03-02T00:00:00.000Z",'
    '"updated_at":"2026-03-03T00:00:00.000Z","auto_generated":true,"project_name":"trainingapp",'
    '"encounter_score":0,"recent_negative_phase_count":0,"revision":3}'
)
V2_ORDER_B = (
    '{"id":"1c2d3e4f-0000-4000-8000-000000000003","tier":"swarm","lesson":"Prefer '
    'stream.Readable.from(generator) over async iterators for backpressure in node",'
    '"category":"performance","tags":["runtime"],"scope":"global","confidence":0.7999999999999999,'
    '"status":"candidate","confirmed_by":[],"retrieval_outcomes":{"applied_count":0,'
    '"succeeded_after_count":0,"failed_after_count":0,"shown_count":0,"acknowledged_count":0,'
    '"applied_explicit_count":0,"ignored_count":0,"violated_count":0,"contradicted_count":0,'
    '"succeeded_after_shown_count":0,"failed_after_shown_count":0},"schema_version":1,'
    '"created_at":"2026-03-04T00:00:00.000Z","updated_at":"2026-03-04T00:00:00.000Z",'
    '"project_name":"trainingapp","auto_generated":true}'
)
CHINESE = (
    '{"id":"2d3e4f50-0000-4000-8000-000000000004","tier":"swarm","lesson":"在提交之前务必运行全部'
    '单元测试以避免回归问题","category":"process","tags":[],"scope":"global","confidence":0.6,'
    '"status":"candidate","confirmed_by":[{"phase_number":1,"confirmed_at":'
    '"2026-03-05T00:00:00.000Z","project_name":"x-cartographer"}],"retrieval_outcomes":'
    '{"applied_count":0,"succeeded_after_count":0,"failed_after_count":0},"schema_version":1,'
    '"created_at":"2026-03-05T00:00:00.000Z","updated_at":"2026-03-05T00:00:00.000Z",'
    '"project_name":"x-cartographer","auto_generated":true}'
)
MANUAL = (
    '{"id":"3e4f5061-0000-4000-8000-000000000005","tier":"swarm","lesson":"\\"Use pnpm, not '
    'npm, in this monorepo\\" (confidence 0.8, category: process)","category":"process","tags":'
    '["contradiction:Use npm for installs in every package of the"],"scope":"global",'
    '"confidence":0.5,"status":"candidate","confirmed_by":[],"project_name":"",'
    '"retrieval_outcomes":{"applied_count":0,"succeeded_after_count":0,"failed_after_count":0},'
    '"schema_version":1,"created_at":"2026-03-06T00:00:00.000Z","updated_at":'
    '"2026-03-06T00:00:00.000Z","hive_eligible":false,"auto_generated":false}'
)
DIRECTIVE = (
    '{"id":"4f506172-0000-4000-8000-000000000006","tier":"swarm","lesson":"Call declare_scope '
    'before delegating source edits to the coder agent","category":"process","tags":'
    '["opencode-swarm"],"scope":"global","confidence":0.94,"status":"promoted","confirmed_by":'
    '[{"phase_number":1,"confirmed_at":"2026-03-07T00:00:00.000Z","project_name":"p"},'
    '{"phase_number":2,"confirmed_at":"2026-03-08T00:00:00.000Z","project_name":"p"},'
    '{"phase_number":3,"confirmed_at":"2026-03-09T00:00:00.000Z","project_name":"p"}],'
    '"retrieval_outcomes":{"applied_count":0,"succeeded_after_count":0,"failed_after_count":0},'
    '"schema_version":1,"created_at":"2026-03-07T00:00:00.000Z","updated_at":'
    '"2026-03-09T00:00:00.000Z","project_name":"p","auto_generated":true,"hive_eligible":true,'
    '"triggers":["coder delegation modifying source files"],"required_actions":["call '
    'declare_scope before coder delegation"],"forbidden_actions":["bash/eval/heredoc file '
    'writes"],"applies_to_agents":["coder"],"applies_to_tools":["task"],"verification_checks":'
    '["reviewer must reject scope bypass"],"directive_priority":"critical","generated_skill_path":'
    '".opencode/skills/generated/scope-discipline/SKILL.md","source_knowledge_ids":'
    '["insight:ic_decfaaca803f8c81"],"enforcement_mode":"warn","escalation_history":[{"from":'
    '"high","to":"critical","reason":"repeat_violation","at":"2026-03-09T00:00:00.000Z"}],'
    '"last_applied_at":"2026-03-09T00:00:00.000Z","phases_alive":0,"max_phases":10}'
)
ESCAPES = (
    '{"id":"5a617283-0000-4000-8000-000000000007","tier":"swarm","lesson":"Quote paths: use '
    '\\"C:\\\\Program Files\\\\app\\" with\\ttabs and the 🚀 emoji in python","category":"other",'
    '"tags":["python"],"scope":"stack:py_3-11","confidence":0.55,"status":"candidate",'
    '"confirmed_by":[],"retrieval_outcomes":{"applied_count":0,"succeeded_after_count":0,'
    '"failed_after_count":0},"schema_version":1,"created_at":"2026-03-10T00:00:00.000Z",'
    '"updated_at":"2026-03-10T00:00:00.000Z","project_name":"p","auto_generated":true,'
    '"big":12345678901234567890,"exp":1e-7,"neg":-0.5499999999999999}'
)

ALL = [V1, V2_ORDER_A, V2_ORDER_B, CHINESE, MANUAL, DIRECTIVE, ESCAPES]


def write_store(path, lines=ALL, *, trailing_newline: bool = True) -> bytes:  # type: ignore[no-untyped-def]
    body = "\n".join(lines) + ("\n" if trailing_newline else "")
    data = body.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
