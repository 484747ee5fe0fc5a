from django.urls import path

from artifacts.nsight import views as nsight_views

urlpatterns = [
    path("nsight/", nsight_views.nsight_list, name="nsight-list"),
    path("nsight/systems/<int:pk>/", nsight_views.nsys_detail, name="nsight-systems"),
    path("nsight/compute/<int:pk>/", nsight_views.ncu_detail, name="nsight-compute"),
]
