package resource

import "testing"

func TestMetadataIdentity(t *testing.T) {
	md := NewMetadata("ns", "typ", "id", VersionUndefined)
	ns, typ, id := md.Identity()
	if ns != md.Namespace() || typ != md.Type() || id != md.ID() {
		t.Fatalf("Identity() = %q, %q, %q; want the getters' %q, %q, %q", ns, typ, id, md.Namespace(), md.Type(), md.ID())
	}
}
