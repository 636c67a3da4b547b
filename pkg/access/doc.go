// Package access decides who may do what with a daemon's resources and
// debug pages, and writes the audit trail of it. Every door of a daemon
// uses it: the remote State's listener (module pkg/state/remote: remote.Serve
// authenticates each connection and serves the state guarded for its
// identity), the debug handler (package debughttp: WithAccess), and
// in-process callers that want the rules ([Policy.Guard]). The Runtime's
// own controllers are not filtered (their access is the contract's C3 and
// C4); a controller running in another process over the remote client is,
// like any client.
//
// # Identities
//
// An [Identity] comes from the transport, never from what a client says:
// over a unix socket the connecting process's uid, gid, supplementary
// groups and pid as the kernel recorded them (SO_PEERCRED, [PeerIdentity]);
// over TCP the client certificate of mutual TLS, verified against the
// server's client CAs (its subject, common name, organizations and
// subject alternative names, [CertificateIdentity]). An [Authenticator]
// ([PeerCredentials], [MutualTLS]) establishes it for each connection a
// door accepts; a connection it cannot authenticate is closed before
// anything is served.
//
// # Rules
//
// An access is an identity, a [Verb] (get, list, watch, create, update,
// teardown, destroy), a namespace, a type and an ID (empty for a list or
// a watch of a whole kind) — or a [Page] of the debug handler or of the
// API's observer (pprof, explain, graph, health, recording). [Rules] are
// roles — grants of verbs over namespaces and types, with wildcards, and
// pages — bound to identities (a uid, a group, a certificate's subject,
// common name, organization or SAN, an in-process caller's name), and
// rule functions written in Go ([Func]) for daemons with a model of their
// own. A [Policy] compiles them; its [Subject] of an identity decides each
// of its accesses. A sensitive type (definition.Definition.Sensitive) is
// reached only by a grant naming it.
//
// A rule file is YAML:
//
//	roles:
//	  - name: reader
//	    grants:
//	      - verbs: [get, list, watch]     # or "*"
//	        namespaces: ["*"]             # a name, "*", "prefix*" or "*suffix"
//	        types: ["*"]                  # a type or an alias; same wildcards
//	    pages: [explain, graph, health]   # or "*"
//	  - name: link-admin
//	    grants:
//	      - verbs: ["*"]
//	        namespaces: [network]
//	        types: [linkspecs]
//	bindings:
//	  - role: reader
//	    to: [{anyone: true}]
//	  - role: link-admin
//	    to:
//	      - uid: 1002                     # also gid, user, group (names looked up when loaded)
//	      - subject: "CN=ops,O=example"   # also commonName, organization, san, process
//
// # Audit
//
// With [WithAudit], every write through a guarded state is one record of
// the audit logger, and so is every denial: the identity (and the peer's
// uid, gid and pid, or certificate names), the verb or page, the resource,
// the decision, the rule that made it ("role NAME", "function NAME", or
// "default deny") and the roles of the identity, plus the version the
// write committed or its error, or the denial's reason. Allowed reads are
// recorded one in every N ([WithReadSampling]). Records are zap entries
// with the message "access" at info level; the audit logger is the
// daemon's to route (the demo writes audit.log beside its data).
//
// # Rules of the package
//
// A1. An access is denied unless a rule allows it: an identity no binding
// matches has no role and is denied everything; a role's grant allows its
// verbs on its namespaces and types only; a rule function's Deny denies
// whatever else allows. The doors authenticate every connection, and a
// door without an authenticator refuses to start unless it is explicitly
// insecure (remote.Serve, debughttp.Serve).
//
// A2. A sensitive type is visible to a subject only when a grant names it
// (its type or an alias; not "*" nor a pattern) or a rule function allows
// it: otherwise Get, List and Watch of it are denied — so no event of it
// reaches a watch — and the explanations and the trace of the debug
// handler and of the API leave its resources out ([Subject.Visible],
// [Subject.ScrubResource], [Subject.ScrubController]).
//
// A3. Every write through a guarded state and every denial is one audit
// record (see Audit), with the version the write committed.
//
// A4. Every denial is a [*DeniedError] naming the identity, the verb and
// the resource (or the page) and why; the remote State serves it as a
// PermissionDenied status with that message, and its client's error is
// of the access-denied class ([IsDeniedError]). A denied access reads and
// writes nothing.
//
// A5. A rule file that does not parse, or names an unknown key, verb,
// type, page, user or group, refuses to load with every problem as
// "file:line: problem"; rules that name an unknown type or role, or bind
// a role to nobody, refuse to compile. A role bound to nothing and a type
// no bound role reaches are warnings, logged when the policy is made.
//
// A6. Deciding an allowed access allocates nothing (unless a rule
// function does): a guarded Get costs what the state's Get costs plus the
// decision.
//
// A7. An Update that moves a running resource to the tearing-down phase
// is decided as a teardown; if it changes anything else too it needs
// update as well. The state's version check makes the comparison hold.
package access
