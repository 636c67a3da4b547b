// Package definition is the registry of resource definitions: for every
// resource type a daemon knows, what a person or a program needs to find,
// print and guard its resources without having been compiled with its Go
// type — the type, its aliases, its default namespace, the encoding of its
// specs, the columns a table prints, and whether its specs are sensitive.
//
// # One list
//
// A daemon does not keep this list by hand. The codec registry
// (package codec) that encodes a type records its definition when the type
// registers: codec.Register[S, D] derives it from D's typed.Definition
// (type, default namespace) and, when D implements [Provider], from D's
// ResourceDefinition (aliases, columns, sensitivity); RegisterType derives
// it from the resource its constructor returns the same way. The encoding
// is the one the codec writes the type's specs in. codec.Registry.Definitions
// returns the registry so filled, so the types a daemon can encode and the
// types it describes are one list. A [Registry] can also be filled directly
// ([Registry.Add]): a client fills one from the definitions a server sends
// (the remote State's Definitions call), and then knows how to name and
// print types it has no Go type for.
//
//	type LinkDef struct{}
//
//	func (LinkDef) Definition() typed.Definition {
//		return typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}
//	}
//
//	func (LinkDef) ResourceDefinition() definition.Definition {
//		return definition.Definition{
//			Aliases: []string{"links", "link"},
//			Columns: []definition.Column{{Name: "MTU", Path: ".mtu"}, {Name: "Up", Path: ".up"}},
//		}
//	}
//
// # Names
//
// [Registry.Resolve] finds a definition by its type or one of its aliases,
// ignoring case ("links", "Link", "links.net.resgraph.dev"). Registration
// refuses an alias (or type) that another definition already answers to,
// so a name always resolves to one type.
//
// # Columns
//
// A [Column] names a value of the spec for tables: a name and a path into
// the spec's JSON form (the field names of its json tags, or the Go field
// names when it has none), such as ".mtu", ".addresses[0]" or ".link.name"
// (see [ParsePath]). [Column.Value] reads it from a spec decoded from JSON
// into generic values (maps, slices, strings, numbers, booleans).
//
// # Sensitivity
//
// A definition marked Sensitive holds secrets in its specs (keys,
// passwords, tokens). Tools never print such a spec without being told to
// explicitly (the CLI's flag, the recorder's output); access control hides
// the type from roles not granted it by name. [Registry.Sensitive] answers
// for a type without allocating.
//
// # Errors
//
// Bad definitions are refused when they register, with an error naming the
// type and what is wrong: an empty type, an empty or blank alias, an alias
// or type already answered by another definition, an unnamed or duplicate
// column, a column path that does not parse. Registering a type again with
// an equal definition is a no-op; with another definition it is an error.
// A Registry is safe for concurrent use; its zero value is empty and ready.
package definition
