{{- define "idgate.fullname" -}}
{{- if contains "idgate" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-idgate" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "idgate.selectorLabels" -}}
app.kubernetes.io/name: idgate
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "idgate.labels" -}}
{{ include "idgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "idgate.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "idgate.postgres" -}}
{{- if eq .Values.database.type "postgres" -}}true{{- else if eq .Values.database.type "sqlite" -}}{{- else -}}
{{- fail (printf "database.type must be sqlite or postgres, got %q" .Values.database.type) -}}
{{- end -}}
{{- end -}}

{{- define "idgate.replicas" -}}
{{- if include "idgate.postgres" . -}}{{ .Values.replicaCount }}{{- else -}}1{{- end -}}
{{- end -}}

{{/* Values that would contradict what the chart sets, refused with a message naming them. */}}
{{- define "idgate.validate" -}}
{{- range $key := list "host" "port" "secret" "secretFile" -}}
{{- if hasKey $.Values.config $key -}}
{{- fail (printf "config.%s is set by the chart (port: the container port; secrets: secret.existingSecret); remove it" $key) -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey .Values.config "database") (hasKey (.Values.config.database | default dict) "url") -}}
{{- fail "config.database.url is set by the chart: database.type, and database.postgres.existingSecret for PostgreSQL" -}}
{{- end -}}
{{- if include "idgate.postgres" . -}}
{{- if not .Values.database.postgres.existingSecret -}}
{{- fail "database.type=postgres needs database.postgres.existingSecret: the Secret holding the postgres:// URL" -}}
{{- end -}}
{{- if not .Values.secret.existingSecret -}}
{{- fail "database.type=postgres needs secret.existingSecret: every replica must share one key-sealing secret" -}}
{{- end -}}
{{- if lt (int .Values.replicaCount) 1 -}}
{{- fail "replicaCount must be at least 1" -}}
{{- end -}}
{{- end -}}
{{- if not (hasKey .Values.config "issuer") -}}
{{- fail "config.issuer is required: the public URL ending with /oauth" -}}
{{- end -}}
{{- end -}}
