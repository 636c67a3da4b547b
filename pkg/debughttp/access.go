package debughttp

import (
	"net/http"

	"github.com/resgraph/resgraph/pkg/access"
)

// pageAccess is the access.Page that grants p: its own, or one named
// after its path, which only a role granting every page reaches.
func pageAccess(p Page) access.Page {
	if p.Access != "" {
		return p.Access
	}
	return access.Page(p.Path)
}

// guard returns next as served under the handler's policy: to a subject
// granted page ("" for any subject with a role: the index), and to no one
// without a subject. Without a policy, next itself.
func (h *Handler) guard(page access.Page, next http.Handler) http.Handler {
	if h.policy == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub := access.FromContext(r.Context())
		var err error
		switch {
		case sub == nil:
			http.Error(w, "denied: the request has no identity (serve the handler with debughttp.Serve and debughttp.WithAuthenticator)", http.StatusForbidden)
			return
		case page == "":
			err = sub.CheckBound()
		default:
			err = sub.Page(r.Context(), page)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// listed reports whether the index lists p for r's subject.
func (h *Handler) listed(r *http.Request, p Page) bool {
	if h.policy == nil {
		return true
	}
	sub := access.FromContext(r.Context())
	return sub != nil && sub.DecidePage(r.Context(), pageAccess(p)).Allowed
}
