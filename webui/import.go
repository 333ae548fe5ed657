package webui

import "net/http"

func (u *ui) routesImport(mux *http.ServeMux) {}
