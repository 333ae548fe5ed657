package webui

import "net/http"

func (u *ui) routesTokens(mux *http.ServeMux) {}
