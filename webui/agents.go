package webui

import "net/http"

func (u *ui) routesAgents(mux *http.ServeMux) {}
