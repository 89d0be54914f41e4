"""Aligned rules of two public bilingual agent-instruction files (English original, Chinese
translation committed beside it by the repository's owners), copied verbatim; see SOURCES.md.

Each rule is (key, English, Chinese). Keys are stable names used by ``build.py``.
"""

GO_SPRING = [
    (
        "one-home",
        "**One home per rule.** Every rule lives in exactly one document. Cross-cutting rules — those spanning directories or defining relationships between them — home in the entry docs: [ARCHITECTURE.md](ARCHITECTURE.md) for code/directory boundaries, this file for conventions. Module-local rules home in that module's own `DESIGN.md`; do not lift them into an entry doc, or the rule drifts away from the code it governs.",
        "**每条规则单一归属。** 每条规则只在一个文档里存在。跨目录、或定义目录间关系的规则，家在入口文档：[ARCHITECTURE_CN.md](ARCHITECTURE_CN.md) 管代码/目录边界，本文件管约定。模块内部规则，家在该模块自己的 `DESIGN.md`；别把它们抬进入口文档，否则规则会漂离它治理的代码。",
    ),
    (
        "relocate",
        "**Relocate, don't summarize.** To consolidate a duplicated rule, move it to its home and replace the original with a link. Never write a summary and keep the original too — that produces copies that drift apart.",
        '**搬家，不摘要。** 收敛重复规则时，把它搬到它的家、原处改成链接。绝不"写一份摘要还留着原文"——那会制造彼此漂移的副本。',
    ),
    (
        "one-way",
        "**References point one way.** Entry docs point down to detailed docs. A detailed doc may point back up to the single owner of a cross-cutting rule, but avoid bidirectional link loops.",
        "**引用单向。** 入口文档向下指向细节文档。细节文档可单向指回某条跨目录规则的唯一 owner，但避免双向互引成环。",
    ),
    ("hi", 'Start every reply with "Hi,Go-Spring.".', '每条回复都以 "Hi,Go-Spring." 开头。'),
    (
        "tradeoff",
        "Give each proposal one complete technical trade-off analysis (risks and costs included); once the user decides, execute it fully and without commentary, and do not re-argue (2026-09-21).",
        "每个提议给一次完整的技术权衡（含风险与代价）；用户拍板后不带评判地执行到底，不重复反驳（2026-09-21）。",
    ),
    (
        "awkward",
        'In architecture decisions, "this feels awkward", "one mental model", and "an evolution seam in the signature" are legitimate benefits in their own right — do not overrule them with "the engineering-optimal solution" or "line count".',
        "架构决策里「别扭感」「心智模型统一」「签名上的演进缝」本身就是合法收益，不得用「工程最优解」「代码行数」否决。",
    ),
    (
        "reversal",
        "Point out proactively when you notice you have reversed your own position (for example, arguing to delete a mechanism you had earlier deleted and then defended).",
        "发现自己前后立场翻转（如某机制删了又论证删得对）时主动指出。",
    ),
    (
        "design-order",
        'Answer design questions in order: (1) first judge whether the requirement itself is sound (validate against a real scenario, not against code); (2) then judge whether the change itself is sound — "break compatibility" is an allowed conclusion; (3) only if the first two hold, discuss how compatibility lands; (4) always state the cost of a change, or it is one-sided advocacy (2026-09-28).',
        "回答设计问题按序：(1) 先判需求本身是否合理（拿真实场景验证，不拿代码验证）；(2) 再判改动本身是否合理——允许结论为「要破兼容」；(3) 前两步站得住才谈兼容性落地；(4) 讲改动必须带代价，否则是单面辩护（2026-09-28）。",
    ),
    (
        "no-defend",
        "Never defend the current code: \"that's how it is / that's how the code is written\" is not an argument (2026-09-28).",
        "不为当前代码辩护：不得用「现状如此 / 代码里就是这么写的」作为论证（2026-09-28）。",
    ),
    (
        "converge",
        "The user grows visibly impatient when the same question goes back and forth: converge fast; do not split one decision into several confirmations.",
        "用户被同一问题来回几轮会明显不耐烦：收敛要快，别把一个决策拆成多次确认。",
    ),
    (
        "working-model",
        'Before judging a design, align on the working model: first establish "whom does this system declare itself to serve, and by what model does it work", then judge; with the model undefined, no implementation is right or wrong (2026-10-03).',
        "评一段设计前先对齐工作模型：先确认「这个系统声明为谁、按什么模型工作」，再做判断；模型未定时任何实现都没有对错（2026-10-03）。",
    ),
    (
        "rederive",
        "When a premise of yours is disproved, re-derive the conclusion instead of swapping in another premise to defend the same conclusion.",
        "发现自己论据被证伪时，重新推导结论，而不是换一个论据守同一个结论。",
    ),
    (
        "only-asked",
        "Answer only what was asked: if asked for facts, give facts only (call sites, dependency edges, line numbers); output analysis only when explicitly requested, and deliver it in one pass (2026-09-28).",
        "只回答被问的问题：被问事实就只给事实（调用点、依赖边、行号）；分析类内容仅在明确要求时输出，且一轮讲完（2026-09-28）。",
    ),
    (
        "no-probe",
        'Do not end with probing questions such as "do you need me to ...?"; the user will raise their own requests.',
        "不以「需要我……吗」收尾试探；用户会自己提要求。",
    ),
    (
        "no-expand",
        "When unsure whether to expand, default to not expanding.",
        "不确定要不要展开时，默认不展开。",
    ),
    (
        "find-work",
        'Do not wait to be assigned work; find it. Keep interrogating an implementation for a better solution, even trying several and picking the best ("best of the best").',
        "不等被派任务，自己发现任务；对实现持续追问以找更优解，甚至试多种实现择优（「优中选优」）。",
    ),
    (
        "sacred-core",
        "Sacred core (no breaking changes): `stdlib/`, `log/`, and the `gs` core of `spring/` — additive helpers are fine, breaking changes are not. Freely reshapeable: the ecosystem (`starter/`, `contrib/`, the `gs/` tooling, `examples/`).",
        "神圣核心（不做破坏性改动）：`stdlib/`、`log/`、`spring/` 的 gs 核心——可加性 helper 可以，破坏性改动不可；可自由重塑：生态（`starter/`、`contrib/`、`gs/` 工具、`examples/`）。",
    ),
    (
        "user-wins",
        "The previous bullet is a self-imposed constraint, not a boundary to hold up against the user: when the user gives an explicit instruction, the user wins (2026-09-21).",
        "上一条是自我约束，不是可以拿来挡用户的边界：用户显式指示时以用户为准（2026-09-21）。",
    ),
    (
        "consistency",
        'Expose problems through "cross-backend / cross-module consistency": where an implementation deviates from its family\'s contract is usually a real defect.',
        "用「跨后端 / 跨模块一致性」暴露问题：某实现偏离家族契约处通常是真缺陷。",
    ),
    (
        "docs-ruler",
        "The repository docs (`ARCHITECTURE.md`, `starter/DESIGN.md`, each package's `DESIGN.md`) encode the contract — read them first as a ruler, and fix doc drift alongside the code.",
        "仓库文档（`ARCHITECTURE.md`、`starter/DESIGN.md`、各包 `DESIGN.md`）编码契约——先读它们当尺子，并随代码一起修文档漂移。",
    ),
    (
        "verify",
        "Verify with build + vet + test; add new tests only for testable backends, and honestly state the coverage gap for backends that have none (they need live infra).",
        "用 build + vet + test 验证；只有可测后端加新测试，对无测试后端（需 live infra）诚实说明覆盖缺口。",
    ),
    (
        "fix-own-bug",
        'A self-owned bug you have pinpointed (root cause found, fix clear, reproducible) must be fixed directly, even if it sits in a module marked "mature core"; "boundary / sacred ground" is not an excuse.',
        "已精确定位的自家 bug（根因已找到、修法清楚、可复现）必须直接修，即使它落在标注为「成熟核心」的模块；「边界 / 圣域」不能当借口。",
    ),
    (
        "fake-boundary",
        'Distinguish real boundaries from fake ones: a real boundary means the fix needs something unavailable here (for example an intranet GOPROXY); a fake boundary is "this file is in the sensitive area I labeled" while the fix is local and verifiable.',
        "区分真边界与假边界：真边界 = 修复需要此处不可得的东西（如内网 GOPROXY）；假边界 = 「这个文件在我标注的敏感区」而修复是局部且可验证的。",
    ),
    (
        "escalate",
        "When the trail is uncertain, escalate (add instrumentation, read more) rather than treating the uncertainty as a reason to hand back; do not let the work drift toward the easy audit and away from the hard fix.",
        "追踪不确定时加码（插桩、读更多），而不是把不确定性当交还理由；不要让工作偏向容易的审计而回避难修的修复。",
    ),
    (
        "no-worktree",
        "By default, edit in place on the current branch; do not create a worktree (unless the user explicitly asks), and do not proactively offer the worktree option (2026-07-22).",
        "默认在当前分支就地编辑，不建 worktree（除非用户显式要求）；不要主动提 worktree 选项（2026-07-22）。",
    ),
    (
        "no-history",
        'When the user says "forget the previous rationale, describe only the current behavior", it is a hard constraint: read only the current working-tree files; do not use `git show HEAD:<file>`, `git log -p`, or dig through deleted history for old versions (2026-10-02).',
        "用户要求「忘记以前的原由、只说现在的功能」时是硬约束：只读工作区当前文件，禁止 `git show HEAD:<file>`、`git log -p` 或翻删除记录找旧版本（2026-10-02）。",
    ),
    (
        "old-docs",
        "Old docs are not source material or a writing anchor; after writing, self-check that every sentence has a basis in the current code.",
        "旧文档不能作为素材或行文锚点；写完自查每句话能否在当前代码里找到依据。",
    ),
    (
        "no-why",
        'Never write `Why` / design-trade-off sentences; the only permitted "past" is format convention such as the license header, assert-library usage, and the `README.md` + `README_CN.md` pairing.',
        "`Why` / 设计取舍类句子一律不写；允许保留的「过去」只有许可证头、assert 库用法、`README.md`+`README_CN.md` 配对等格式约定。",
    ),
    (
        "siblings",
        "When you only need format conventions, look at sibling packages of the same kind — for format, not for content.",
        "只需参考同类兄弟包取格式约定，不取内容。",
    ),
    (
        "license",
        "Every source file must carry the Apache License header; see [LICENSE_HEADER](LICENSE_HEADER) for the template.",
        "每个源文件都必须带有 Apache License 头；模板见 [LICENSE_HEADER](LICENSE_HEADER)。",
    ),
]

TOWN_OS = [
    (
        "use-make",
        "**Use `make`, not raw compiler/test tools.** Never run `go build`, `go test`, `go vet`, `golangci-lint`, `bun test`, `vitest`, or any equivalent directly. Always go through a make target so the repo's wrappers (cleanup traps, btrfs lifecycle, per-run instance IDs) apply.",
        "**使用 `make`，而非底层的编译/测试工具。** 绝不直接运行 `go build`、`go test`、`go vet`、`golangci-lint`、`bun test`、`vitest` 或任何等价命令。一律通过 make 目标执行，这样仓库的封装（清理陷阱、btrfs 生命周期、每次运行的实例 ID）才会生效。",
    ),
    (
        "free-targets",
        "**Make targets you may run whenever you need them** (fast, idempotent, no remote side effects): `make help`, `make lint`, `make check-*` (bun / go / podman / runc / btrfs / libsystemd / golangci-lint). Use these freely to validate changes — you don't need to ask first.",
        "**可随时运行的 make 目标**（快速、幂等、无远程副作用）：`make help`、`make lint`、`make check-*`（bun / go / podman / runc / btrfs / libsystemd / golangci-lint）。可自由使用它们来验证改动——无需事先询问。",
    ),
    (
        "no-force-push",
        "DO NOT FORCE PUSH FOR ANY REASON EVER.",
        "任何情况下都绝不强制推送（force push）。",
    ),
    (
        "push-origin",
        'when you need to push, push to "origin" only.',
        '需要推送时，只推送到 "origin"。',
    ),
    (
        "pull-rebase",
        'BEFORE YOU PUSH, ALWAYS "git pull --rebase" and fix any merge issues.',
        "推送前务必先执行 `git pull --rebase`，并解决所有合并冲突。",
    ),
    (
        "no-gpg",
        "DO NOT TOUCH GPG IN ANY WAY. Just `git commit` normally. If signing fails, stop and ask the user. Never kill gpg-agent, never use --no-gpg-sign, never try to fix GPG yourself.",
        "绝不以任何方式碰 GPG。正常执行 `git commit` 即可。若签名失败，停下来询问用户。绝不杀掉 gpg-agent，绝不使用 `--no-gpg-sign`，绝不自行尝试修复 GPG。",
    ),
    ("sign", "DO NOT COMMIT WITHOUT SIGNING.", "提交必须签名。"),
    (
        "params-used",
        "when parameters are supplied, ensure they are used in the calling function",
        "当提供了参数时，确保调用函数中真正使用了这些参数",
    ),
    (
        "concurrent",
        "**Concurrent safety** — `make test-full` must always be able to run simultaneously in the same repository without conflicting. Nothing else matters more than this.",
        "**并发安全** —— `make test-full` 必须始终能够在同一仓库中同时运行而互不冲突。没有任何事情比这更重要。",
    ),
    (
        "context-todo",
        "context.TODO and context.Background should not be used in golang programs. where possible, please use timeout and cancel contexts to ensure nothing is waiting on a context forever.",
        "Go 程序中不应使用 context.TODO 与 context.Background。凡有可能，请使用带超时和取消的 context，确保不会有任何东西永久等待某个 context。",
    ),
    (
        "tests-everything",
        "Add tests for everything you do. **Every behavioral change must have both unit tests and integration tests.** Unit tests verify logic in isolation; integration tests verify the feature works end-to-end inside the test container with real systemd, btrfs, and podman. If an integration test cannot be written (e.g., pure UI change), document why in the commit message.",
        "你所做的每件事都要加测试。**每一处行为改动都必须同时具备单元测试和集成测试。** 单元测试隔离验证逻辑；集成测试在测试容器内、使用真实的 systemd、btrfs 与 podman 端到端验证功能。若确实无法编写集成测试（例如纯 UI 改动），在提交信息中说明原因。",
    ),
    (
        "cmd-entrypoint",
        "**Use CMD instead of ENTRYPOINT in container images** — all Containerfiles and inline Containerfile strings must use `CMD` instead of `ENTRYPOINT`. This allows `podman run <image> <command>` to override the default command without `--entrypoint`. Applies to the systemcontroller image, NC image, and any dynamically generated Containerfiles.",
        "**容器镜像中使用 CMD 而非 ENTRYPOINT** —— 所有 Containerfile 及内联的 Containerfile 字符串都必须使用 `CMD` 而非 `ENTRYPOINT`。这样 `podman run <image> <command>` 无需 `--entrypoint` 即可覆盖默认命令。适用于 systemcontroller 镜像、NC 镜像，以及任何动态生成的 Containerfile。",
    ),
    (
        "ca-bundle",
        "**Every runtime container image must ship a system CA bundle** — any Containerfile (or inline Containerfile string) whose final stage runs Town OS code making outbound HTTPS calls must install `ca-certificates` (debian/ubuntu: `apt-get install ca-certificates`; alpine: `apk add ca-certificates`) unless the base image already provides it (e.g. `caddy`, `oven/bun`). Without a CA bundle, Go's TLS stack fails every HTTPS call with `x509: certificate signed by unknown authority` and failures in background pollers are invisible at default log level (see `fetchExternalIP` silently dropping `ipinfo.io` responses). When adding a new Containerfile, verify the final image has `/etc/ssl/certs/ca-certificates.crt` before considering the image shippable.",
        "**每个运行时容器镜像都必须自带系统 CA 证书包** —— 任何 Containerfile（或内联的 Containerfile 字符串），只要其最终阶段运行的 Town OS 代码会发起对外 HTTPS 调用，就必须安装 `ca-certificates`（debian/ubuntu：`apt-get install ca-certificates`；alpine：`apk add ca-certificates`），除非基础镜像已经提供（例如 `caddy`、`oven/bun`）。缺少 CA 证书包时，Go 的 TLS 栈会让每一次 HTTPS 调用都失败并报 `x509: certificate signed by unknown authority`，而后台轮询器中的失败在默认日志级别下是不可见的（参见 `fetchExternalIP` 静默丢弃 `ipinfo.io` 响应的情况）。新增任何 Containerfile 时，先确认最终镜像中存在 `/etc/ssl/certs/ca-certificates.crt`，再认为该镜像可以发布。",
    ),
    (
        "replace",
        "**`--replace` on all `podman run --name`** — no exceptions, anywhere in the repo.",
        "**所有 `podman run --name` 都必须带 `--replace`** —— 全仓库无一例外。",
    ),
    (
        "fail-fast",
        "**Fail fast** — if any make subtask or script launched by a make subtask fails, stop immediately. Do not continue to the next phase.",
        "**快速失败** —— 若任何 make 子任务，或由 make 子任务启动的脚本失败，立即停止。不要继续进入下一阶段。",
    ),
    (
        "exit-codes",
        "**Never swallow exit codes** — scripts that run make/test commands must never swallow exit codes. No `|| rc=$?`, no `|| true` on test invocations. Let `set -e` do its job. Cleanup commands (podman rm, rm -f) are exempt.",
        "**绝不吞掉退出码** —— 运行 make/测试命令的脚本绝不能吞掉退出码。不要写 `|| rc=$?`，不要在测试调用上写 `|| true`。让 `set -e` 发挥作用。清理命令（podman rm、rm -f）不在此限。",
    ),
    (
        "unique-paths",
        "**No hardcoded shared resources in tests** — all test temp files, sockets, directories, and ports must use unique-per-run paths (`t.TempDir()`, `filepath.Join`, `findFreePort`, etc.). Never use fixed paths like `/tmp/foo.sock`.",
        "**测试中不得硬编码共享资源** —— 所有测试临时文件、socket、目录与端口都必须使用每次运行唯一的路径（`t.TempDir()`、`filepath.Join`、`findFreePort` 等）。绝不使用 `/tmp/foo.sock` 这样的固定路径。",
    ),
    (
        "allowed-targets",
        '**Running the allowed make targets is fine without being asked; anything else in the "requires permission" list above needs an explicit OK.** Never invoke `go`, `go test`, `go vet`, `golangci-lint`, `bun test`, `vitest`, etc. directly — always go through make.',
        '**运行上述允许的 make 目标无需事先询问；"需要许可"列表中的其他任何操作都需要明确同意。** 绝不直接调用 `go`、`go test`、`go vet`、`golangci-lint`、`bun test`、`vitest` 等——一律通过 make。',
    ),
    (
        "commit-when-told",
        "**Only commit or push when told** — never run `git commit` or `git push` unless the user explicitly asks. Never force push (`--force` or `--force-with-lease`).",
        "**只在被告知时提交或推送** —— 除非用户明确要求，否则绝不运行 `git commit` 或 `git push`。绝不强制推送（`--force` 或 `--force-with-lease`）。",
    ),
    (
        "os-exit",
        "systemcontroller should never call os.Exit unless the service is actually being terminated - critical errors should be addressed with fatal logging",
        "systemcontroller 绝不应调用 os.Exit，除非该服务确实正在被终止——严重错误应以 fatal 级日志处理",
    ),
    (
        "check-errors",
        "please check all errors. do not underscore or skip error checking for any reason in any part of code ever",
        "请检查所有错误。任何代码的任何部分，都不得以任何理由用下划线忽略或跳过错误检查",
    ),
    (
        "inline-err",
        "Always use inline error syntax in if statements when possible (e.g., `if err := foo(); err != nil {`)",
        "尽可能在 if 语句中使用内联错误语法（例如 `if err := foo(); err != nil {`）",
    ),
    (
        "high-ports",
        "**Test services use random high ports** — integration tests that start network services (DNS, HTTP, gRPC, etc.) must bind to random high ports via `findFreePort`, never well-known ports like 53 or 80. This prevents conflicts when multiple test runs execute simultaneously.",
        "**测试服务使用随机高位端口** —— 启动网络服务（DNS、HTTP、gRPC 等）的集成测试必须通过 `findFreePort` 绑定到随机高位端口，绝不使用 53 或 80 这类知名端口。这可防止多个测试同时运行时发生冲突。",
    ),
    (
        "no-remote-push-tests",
        "**Never write tests that push to remote Gitea or GitHub.**",
        "**绝不编写会向远端 Gitea 或 GitHub 推送的测试。**",
    ),
    (
        "dont-argue",
        "**When I tell you to do something, do not argue.**",
        "**当我让你做某件事时，不要争辩。**",
    ),
    (
        "local-repos",
        "**Test git operations should prefer local repos over remote repos when it doesn't matter** — e.g., populate-repos should clone from a local sibling directory if it exists rather than fetching from GitHub.",
        "**在无关紧要时，测试的 git 操作应优先使用本地仓库而非远程仓库** —— 例如 populate-repos 应在存在本地同级目录时从该目录克隆，而不是从 GitHub 拉取。",
    ),
    (
        "fix-warnings",
        "Please fix all warnings in tests that can be fixed as they arrive",
        "请随时修复测试中所有可修复的警告",
    ),
    (
        "file-size",
        "Ensure all files are organized by api. They should be scoped by subsection name, hierarchically. The metric for line count should be about 500 or so.",
        "确保所有文件按 API 组织。它们应按子模块名称分层限定作用域。行数的参考指标大约为 500 行。",
    ),
    (
        "strings-builder",
        "**Use `strings.Builder` for string construction** — never build strings character-by-character with `string(append([]byte(s), c))`. Use `strings.Builder` with `WriteByte`/`WriteString` for O(n) instead of O(n²) allocations. See `src/packages/packages_compile.go` (`applyTemplate`, `applyTemplates`).",
        "**使用 `strings.Builder` 构造字符串** —— 绝不用 `string(append([]byte(s), c))` 逐字符构造字符串。使用 `strings.Builder` 配合 `WriteByte`/`WriteString`，把 O(n²) 的分配降为 O(n)。参见 `src/packages/packages_compile.go`（`applyTemplate`、`applyTemplates`）。",
    ),
    (
        "prealloc",
        "**Pre-allocate slices when size is known** — use `make([]T, 0, capacity)` when the result size or an upper bound is known (e.g., `limit` from pagination). Avoid `var items []T` followed by unbounded `append` in hot paths.",
        "**已知大小时预分配切片** —— 当结果大小或其上界已知时（例如分页中的 `limit`），使用 `make([]T, 0, capacity)`。避免在热路径中先 `var items []T` 再无界 `append`。",
    ),
]
