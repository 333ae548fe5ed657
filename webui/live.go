package webui

import "net/http"

func (u *ui) routesLive(mux *http.ServeMux) {}
