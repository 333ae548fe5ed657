package webui

import "net/http"

func (u *ui) routesDiagnostics(mux *http.ServeMux) {}
