from django.urls import path

from artifacts.jobs import views

urlpatterns = [
    path("jobs/", views.job_list, name="job-list"),
    path("jobs/<int:pk>/", views.job_detail, name="job-detail"),
    path("jobs/<int:pk>/members/", views.job_member_change, name="job-member-change"),
]
